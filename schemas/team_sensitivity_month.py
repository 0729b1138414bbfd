"""Contract of `team_sensitivity_month` (grain: month x team x meter x assumption): a team's meter
with one assumption at its low and at its high end, the others central (the audit's tornado
charts). Sensitivities for reading which assumption matters, not ranges."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class TeamSensitivityMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    meter: str = pa.Field(isin=["co2e_location_kg", "co2e_embodied_kg"])
    assumption: str = pa.Field(description="coefficient id")
    low: float = pa.Field(description="the meter with the assumption at its low end")
    high: float = pa.Field(description="the meter with the assumption at its high end")

    class Config:
        coerce = True
        strict = True
        unique = ["month", "team", "meter", "assumption"]
