"""Contract of `team_audit_month` (grain: month x team, one row per team of team_month): what the
footprint audit shows of a team beyond team_month, computed in the build: the bounds of its IT
energy (all, and the estimated part) and its amortized embodied CO2e with bounds."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH
from schemas.carbon_month import SLACK
from schemas.ranges import REL


class TeamAuditMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    it_energy_kwh_low: float = pa.Field(description="sum of the team's energy lines' low bounds")
    it_energy_kwh_high: float = pa.Field(description="sum of the team's energy lines' high bounds")
    it_energy_kwh_estimated_low: float = pa.Field(description="the same over its estimated lines only")
    it_energy_kwh_estimated_high: float
    gpu_hours_unknown_model: float = pa.Field(nullable=True, ge=0, description="GPU-hours on resources of unknown model")
    co2e_embodied_kg: float = pa.Field(nullable=True, ge=0, description="amortized embodied CO2e; null: no GPU-hours")
    co2e_embodied_kg_low: float = pa.Field(nullable=True, ge=0)
    co2e_embodied_kg_high: float = pa.Field(nullable=True, ge=0)
    embodied_method: str = pa.Field(nullable=True, description="how the embodied figure was built")
    embodied_assumption_ids: str = pa.Field(nullable=True, description="coefficient ids, ';'-separated")

    @pa.dataframe_check(columns=["it_energy_kwh_low", "it_energy_kwh_high"])
    def it_bounds_ordered(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        return df["it_energy_kwh_low"] <= df["it_energy_kwh_high"] + REL * df["it_energy_kwh_high"].abs() + REL

    embodied_range = SLACK.check("embodied_range", "co2e_embodied_kg")

    class Config:
        coerce = True
        strict = True
        unique = ["month", "team"]
