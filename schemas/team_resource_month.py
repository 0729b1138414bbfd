"""Contract of `team_resource_month` (grain: month x team x resource x billing currency; resource null = charges tied
to no resource): a statement's lines, each resource's allocated cost split by part of the bill."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from core.units import HALF_CENT
from schemas.allocation_lines import MONTH

PARTS = ["effective_cost_direct", "effective_cost_idle", "effective_cost_shared", "effective_cost_credits"]


class TeamResourceMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    resource_id: str = pa.Field(nullable=True)
    instance_type: str = pa.Field(nullable=True)
    instance_hours: float = pa.Field(nullable=True, description="GPU-hours / GPUs per instance")
    gpu_hours: float = pa.Field(nullable=True, description="billed GPU-hours as allocated")
    billed_cost: float
    effective_cost: float
    facility_energy_kwh: float = pa.Field(nullable=True, ge=0)
    co2e_kg: float = pa.Field(nullable=True, ge=0)

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team", "resource_id", "currency"]

    @pa.dataframe_check()
    def parts_add_up(cls, df: pd.DataFrame) -> pd.Series:
        """The split by part of the bill adds up to the effective cost (to the cent)."""
        return (df[PARTS].sum(axis=1) - df["effective_cost"]).abs() < HALF_CENT
