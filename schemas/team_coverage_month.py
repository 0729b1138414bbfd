"""Contract of `team_coverage_month` (grain: month x team): how much of a team's billed GPU time
and GPU cost telemetry describes."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class TeamCoverageMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    gpu_hours: float = pa.Field(description="billed GPU-hours as allocated")
    gpu_hours_with_telemetry: float = pa.Field(description="... on resources telemetry maps to")
    gpu_cost: float = pa.Field(description="effective cost of GPU resources as allocated")
    gpu_cost_with_telemetry: float
    gpu_hours_observed: float = pa.Field(ge=0)
    has_telemetry: bool = pa.Field(description="telemetry observed some of this team's GPU time")
    gpu_hours_telemetry_share: float = pa.Field(nullable=True, description="null where the team has no billed GPU-hours")
    gpu_cost_telemetry_share: float = pa.Field(nullable=True)

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team"]

    @pa.dataframe_check()
    def telemetry_only_where_observed(cls, df: pd.DataFrame) -> pd.Series:
        return df["has_telemetry"] == (df["gpu_hours_observed"] > 0)
