"""Contract of `run_month` (grain: one CodeCarbon run, at its last snapshot): the runs the footprint
audit, the what-if and the scaling fits read, dated by the month of their end."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class RunMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM of the run's end, UTC")
    file_id: int
    row_number: int
    end_utc: pa.DateTime
    duration_s: float = pa.Field(ge=0)
    energy_kwh: float = pa.Field(description="CodeCarbon's energy_consumed, PUE applied as it wrote it")
    gpu_energy_kwh: float = pa.Field(nullable=True, description="GPU share of it")
    snapshots: int = pa.Field(ge=1, description="loaded rows behind the run: its snapshots, in every file that holds them")

    class Config:
        coerce = True
        strict = False
        unique = ["file_id", "row_number"]
