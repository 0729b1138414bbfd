"""Contract of `gpu_hours` (grain: one physical GPU x one UTC hour). Validated lazily with
pandera after every stage run: the table is an hourly rollup, small enough for pandas."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

ENERGY_TIERS = ["counter", "counter_gap", "power_integral"]


class GpuHours(pa.DataFrameModel):
    gpu_uuid: str = pa.Field(description="physical GPU; MIG instances are folded into it")
    hour_start: pd.Timestamp = pa.Field(description="UTC hour")
    energy_kwh: float = pa.Field(nullable=True, ge=0, description="IT energy of the GPU board in the hour")
    energy_kwh_low: float = pa.Field(nullable=True, ge=0)
    energy_kwh_high: float = pa.Field(nullable=True, ge=0)
    estimated_kwh: float = pa.Field(nullable=True, ge=0, description="part of energy_kwh estimated over gaps")
    gap_kwh: float = pa.Field(nullable=True, ge=0, description="part of energy_kwh placed by spreading a gap's counter rise")
    excess_kwh: float = pa.Field(ge=0, description="energy read above what the board can draw in an hour, not charged")
    board_max_kwh: float = pa.Field(nullable=True, gt=0, description="TDP x board_power_tolerance x 1 h")
    share_hour: pd.Timestamp = pa.Field(description="the hour whose workload shares the energy follows")
    energy_tier: str = pa.Field(nullable=True, isin=ENERGY_TIERS)
    power_w_mean: float = pa.Field(nullable=True, ge=0)
    util_mean: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="0-1 ratio")
    sm_active_mean: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1})
    tensor_active_mean: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1})
    coverage: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="observed share of the hour")
    energy_coverage: float = pa.Field(in_range={"min_value": 0, "max_value": 1},
                                      description="share of the hour whose energy is known (observed or inside a counter gap)")

    class Config:
        coerce = True
        strict = False
        unique = ["gpu_uuid", "hour_start"]

    @pa.dataframe_check()
    def range_holds_the_estimate(cls, df: pd.DataFrame) -> pd.Series:
        """energy_kwh_low <= energy_kwh <= energy_kwh_high wherever energy is known."""
        tol = 1e-9 * df["energy_kwh"].abs().fillna(0)
        return df["energy_kwh"].isna() | ((df["energy_kwh_low"] <= df["energy_kwh"] + tol) & (df["energy_kwh"] <= df["energy_kwh_high"] + tol))

    @pa.dataframe_check()
    def no_hour_above_the_board(cls, df: pd.DataFrame) -> pd.Series:
        """No GPU-hour is charged more than its board can draw in an hour (TDP x tolerance)."""
        limit = df["board_max_kwh"] * (1 + 1e-9)
        return df["board_max_kwh"].isna() | df["energy_kwh"].isna() | (df["energy_kwh"] <= limit)
