"""Contract of `team_gpu_model_month` (grain: month x team x gpu_model x ownership): billed
GPU-hours as allocated, by the GPU model of the resource (null: unknown model) and who owns it."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class TeamGpuModelMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    gpu_model: str = pa.Field(nullable=True, description="gpu_specs model; null for an unknown model")
    ownership: str = pa.Field(isin=["cloud", "colocation", "on-premises"], description="who owns the hardware")
    gpu_hours: float = pa.Field(description="allocated billed GPU-hours; negative on corrections")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team", "gpu_model", "ownership"]
