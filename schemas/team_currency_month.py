"""Contract of `team_currency_month` (grain: month x team x billing currency): a team's money in
its billing currency and, beside it, in the month's reporting currency. Per month, billing
currency and meter the reporting amounts sum to the converted bill, rounded once (the SQL's
largest remainder); per team the parts sum to its billed and effective cost. Reporting amounts
are null where a rate is missing or no reporting currency is set."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from core.units import HALF_CENT
from schemas.allocation_lines import ISO_4217, MONTH

PARTS = ("direct", "idle", "shared", "credits")


class TeamCurrencyMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    currency: str = pa.Field(str_matches=ISO_4217, description="billing currency")
    reporting_currency: str = pa.Field(nullable=True, str_matches=ISO_4217,
                                       description="[currency] reporting, else the month's only billing currency")
    rate_rule: str = pa.Field(isin=["day", "month_average", "budget"])
    billed_cost: float = pa.Field(description="in the billing currency; exact DECIMAL in the table")
    effective_cost: float
    list_cost: float
    billed_cost_reporting: float = pa.Field(nullable=True, description="in the reporting currency")
    effective_cost_reporting: float = pa.Field(nullable=True)
    list_cost_reporting: float = pa.Field(nullable=True)
    rated: bool = pa.Field(description="every day of this bill had a rate")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team", "currency"]

    @pa.dataframe_check(columns=["billed_cost_reporting", *(f"billed_cost_{p}_reporting" for p in PARTS)])
    def parts_sum_to_the_team(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        parts = sum(df[f"billed_cost_{p}_reporting"] for p in PARTS)
        return df["billed_cost_reporting"].isna() | ((df["billed_cost_reporting"] - parts).abs() < HALF_CENT)
