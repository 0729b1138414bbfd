"""Contract of `team_month_reporting` (grain: team x month): team_month in the month's reporting
currency, one row per team whatever it was billed in. Money is null only where a rate is missing
(the chargeback stops on that with the currency and the day)."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import ISO_4217
from schemas.team_month import TeamMonth


class TeamMonthReporting(TeamMonth):
    currency: str = pa.Field(nullable=True, str_matches=ISO_4217, description="reporting currency")
    billed_cost: float = pa.Field(nullable=True, description="in the reporting currency; exact DECIMAL in the table")
    effective_cost: float = pa.Field(nullable=True)
    list_cost: float = pa.Field(nullable=True)
    effective_cost_idle: float = pa.Field(nullable=True)
    idle_cost: float = pa.Field(nullable=True)
    unallocated_capacity_cost: float = pa.Field(nullable=True)

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team"]
