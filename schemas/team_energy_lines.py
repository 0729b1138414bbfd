"""Contract of `team_energy_lines` (grain: month x team x energy line of int_energy_lines).

No uniqueness is declared: an energy line is also keyed by the team it was measured for, which
this table does not carry. Two lines of one resource, zone and basis (a team's own, and an
untagged namespace's shared out proportionally) both reach that team as two legitimate rows.
Each meter is the line's value times the team's share, so ranges hold up to float rounding.
"""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH
from schemas.ranges import REL, Slack

BASES = ["measured", "estimated"]

# unknown energy (no TDP for the GPU model, no zone factors) is null in all three: it passes
SLACK = Slack(relative=REL)


class TeamEnergyLines(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    zone: str = pa.Field(nullable=True, description="null: no billed zone and no default zone")
    basis: str = pa.Field(isin=BASES)
    resource_id: str = pa.Field(nullable=True, description="null: telemetry of no billed resource")
    is_idle: bool
    ownership: str = pa.Field(isin=["cloud", "colocation", "on-premises"], description="who owns the hardware")
    share: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="the team's share of the line")
    it_energy_kwh: float = pa.Field(nullable=True, ge=0)
    it_energy_kwh_low: float = pa.Field(nullable=True, ge=0)
    it_energy_kwh_high: float = pa.Field(nullable=True, ge=0)
    facility_energy_kwh: float = pa.Field(nullable=True, ge=0, description="null without zone factors")
    facility_energy_kwh_low: float = pa.Field(nullable=True, ge=0)
    facility_energy_kwh_high: float = pa.Field(nullable=True, ge=0)
    co2e_kg: float = pa.Field(nullable=True, ge=0, description="location-based")
    co2e_kg_low: float = pa.Field(nullable=True, ge=0)
    co2e_kg_high: float = pa.Field(nullable=True, ge=0)
    co2e_market_kg: float = pa.Field(nullable=True, ge=0, description="null: no market factor for the zone")
    co2e_market_kg_low: float = pa.Field(nullable=True, ge=0)
    co2e_market_kg_high: float = pa.Field(nullable=True, ge=0)

    class Config:
        coerce = True
        strict = False

    it_energy_range = SLACK.check("it_energy_range", "it_energy_kwh",
                                  "Measured lines have low = central = high; estimated ones the TDP x power-fraction bounds.")

    facility_energy_range = SLACK.check("facility_energy_range", "facility_energy_kwh",
                                        "IT energy bounds times the PUE bounds.")

    co2e_range = SLACK.check("co2e_range", "co2e_kg")

    co2e_market_range = SLACK.check("co2e_market_range", "co2e_market_kg")
