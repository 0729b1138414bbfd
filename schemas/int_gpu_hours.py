"""Contract of `int_gpu_hours` (grain: one physical GPU x one UTC hour). An hourly rollup, yet it grows
with the fleet (10,000 GPUs x 30 days is 7.2 million rows), so it is checked in SQL over the table
(pipelines.stages.IN_SQL); its frame rules are stated once, in SQL, and pandera runs the same SQL
over a frame."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.contract import passing_rows

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

    @pa.dataframe_check(columns=["energy_kwh_low", "energy_kwh", "energy_kwh_high"],
                        passes="energy_kwh is null or coalesce(energy_kwh_low <= energy_kwh + 1e-9 * abs(energy_kwh) "
                               "and energy_kwh <= energy_kwh_high + 1e-9 * abs(energy_kwh), false)")
    def range_holds_the_estimate(cls, df: pd.DataFrame, *, columns: list[str], passes: str) -> pd.Series:
        """energy_kwh_low <= energy_kwh <= energy_kwh_high wherever energy is known (a known
        energy without its range fails too); within 1e-9 relative, the rounding of doubles."""
        return passing_rows(df, passes)

    @pa.dataframe_check(columns=["energy_kwh", "board_max_kwh"], passes="energy_kwh <= board_max_kwh * (1 + 1e-9)")
    def no_hour_above_the_board(cls, df: pd.DataFrame, *, columns: list[str], passes: str) -> pd.Series:
        """No GPU-hour is charged more than its board can draw in an hour (TDP x tolerance); an
        hour without a known board or energy has nothing to compare."""
        return passing_rows(df, passes)
