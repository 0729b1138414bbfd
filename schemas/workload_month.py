"""Contract of `workload_month` (grain: month x team x namespace x pod): the workloads telemetry
saw, under the team their namespace resolves to."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class WorkloadMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str = pa.Field(description="from the namespace ([teams.namespaces], then rules), else the unallocated name")
    namespace: str = pa.Field(description="Kubernetes namespace (idle time is not a workload)")
    pod: str = pa.Field(description="pod; empty when the series carried none")
    gpu_hours: float = pa.Field(ge=0, description="observed GPU-hours")
    it_energy_kwh: float = pa.Field(nullable=True, ge=0, description="GPU board energy in those hours")
    util_mean: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1})

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team", "namespace", "pod"]
