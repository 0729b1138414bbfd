"""Contract of `carbon_month` (grain: month x zone): a zone's facility energy and its CO2e on
annual factors, hour by hour, and market-based, side by side."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH
from schemas.ranges import REL, Slack

SLACK = Slack(absolute=REL, relative=REL)


class CarbonMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    zone: str
    grid_zone: str = pa.Field(nullable=True, description="Electricity Maps zone of the zone's grid")
    facility_energy_kwh: float = pa.Field(ge=0)
    co2e_kg: float = pa.Field(nullable=True, ge=0, description="location-based, annual factor")
    co2e_hourly_kg: float = pa.Field(nullable=True, ge=0, description="location-based, hour by hour where a series gives it")
    facility_energy_kwh_hourly: float = pa.Field(ge=0)
    hourly_share: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1 + REL})
    hours_hourly: int = pa.Field(ge=0, description="UTC hours with energy and an hourly figure")
    hours_annual: int = pa.Field(ge=0, description="UTC hours with energy that fell back to the annual factor")
    co2e_market_kg: float = pa.Field(nullable=True, ge=0, description="null: not available (market_reason)")
    market_status: str = pa.Field(isin=["available", "not available"])
    market_reason: str = pa.Field(nullable=True)

    class Config:
        coerce = True
        strict = False
        unique = ["month", "zone"]

    hourly_range = SLACK.check("hourly_range", "co2e_hourly_kg")

    market_range = SLACK.check("market_range", "co2e_market_kg")

    @pa.dataframe_check(columns=["market_status", "market_reason"])
    def unavailable_says_why(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        return (df["market_status"] == "available") | df["market_reason"].notna()
