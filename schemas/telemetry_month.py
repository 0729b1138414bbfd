"""Contract of `telemetry_month` (grain: month): how much of the billed GPU fleet telemetry
describes, next to the utilization it measured."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH

SHARE = {"min_value": 0, "max_value": 1}


class TelemetryMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    gpu_hours_billed: float = pa.Field(description="billed GPU-hours (usage lines with GPUs)")
    gpu_hours_billed_with_telemetry: float = pa.Field(description="... on resources telemetry maps to")
    gpu_hours_telemetry_share: float = pa.Field(nullable=True, in_range=SHARE)
    gpu_cost_telemetry_share: float = pa.Field(nullable=True, in_range=SHARE)
    gpu_hours_observed: float = pa.Field(ge=0, description="GPU-hours telemetry observed")
    gpu_hours_with_util: float = pa.Field(ge=0, description="observed GPU-hours with a utilization reading")
    util_mean: float = pa.Field(nullable=True, in_range=SHARE, description="over gpu_hours_with_util only")

    class Config:
        coerce = True
        strict = False
        unique = ["month"]

    @pa.dataframe_check()
    def covered_within_billed(cls, df: pd.DataFrame) -> pd.Series:
        """Billed GPU-hours with telemetry are a part of the billed GPU-hours."""
        return df["gpu_hours_billed_with_telemetry"] <= df["gpu_hours_billed"] + 1e-9 * df["gpu_hours_billed"].abs()

    @pa.dataframe_check()
    def util_hours_within_observed(cls, df: pd.DataFrame) -> pd.Series:
        """Utilization is measured on a part of the observed GPU-hours."""
        return df["gpu_hours_with_util"] <= df["gpu_hours_observed"] + 1e-9 * df["gpu_hours_observed"].abs()
