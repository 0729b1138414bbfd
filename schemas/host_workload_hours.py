"""Contract of `host_workload_hours` (grain: host x namespace x UTC hour): a workload's measured
GPU board energy per hour, for checking a CodeCarbon run against DCGM over its window."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class HostWorkloadHours(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    host: str
    namespace: str
    hour_start: pa.DateTime = pa.Field(description="UTC hour")
    it_energy_kwh: float = pa.Field(nullable=True, ge=0, description="GPU board energy in the hour")

    class Config:
        coerce = True
        strict = False
        unique = ["host", "namespace", "hour_start"]
