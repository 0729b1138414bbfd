"""Contract of `team_day` (grain: month x day x team x billing currency): each team's cost and billed GPU-hours by
the day the charges fell on, for the chargeback's daily charts."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class TeamDay(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    day: pa.DateTime = pa.Field(description="UTC date a charge period starts")
    team: str
    billed_cost: float
    effective_cost: float
    gpu_hours: float = pa.Field(description="billed GPU-hours; negative on corrections")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "day", "team", "currency"]
