"""Contract of `team_month` (grain: team x month x billing currency; currency is null only on the
one row of a team with energy but no charges in the month). Money and billed GPU-hours may be
negative (credits, corrections); telemetry GPU-hours, energy and CO2e may not."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from core.units import HALF_CENT
from schemas.allocation_lines import ISO_4217, MONTH
from schemas.ranges import Slack

# Each meter of each team is a sum of allocation lines rounded to a quantum (a watt-hour, a
# gram) separately per meter, so where a group's low and central totals differ by less than a
# few quanta, a team's low can come out a quantum or two above its central. 0.01 (ten quanta)
# absorbs that; a real fault (swapped bounds, a missing factor) is far larger.
ROUNDING_SLACK = 0.01

SLACK = Slack(absolute=ROUNDING_SLACK)


class TeamMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    currency: str = pa.Field(nullable=True, str_matches=ISO_4217, description="billing currency")
    billed_cost: float = pa.Field(description="invoice basis; exact DECIMAL in the table")
    effective_cost: float = pa.Field(description="amortized")
    list_cost: float
    gpu_hours: float = pa.Field(description="billed GPU-hours as allocated; negative on corrections")
    gpu_hours_observed: float = pa.Field(ge=0, description="telemetry GPU-hours")
    idle_gpu_hours: float = pa.Field(ge=0, description="the idle part of gpu_hours_observed: telemetry saw no workload on a GPU billed to the team")
    unallocated_capacity_gpu_hours: float = pa.Field(ge=0, description="GPU capacity no work was given: an owned cluster's GPU-hours no Slurm job held (the team's share of its cost pool's IdleCapacity line), a MIG GPU's slices no pod held")
    unallocated_capacity_gpu_hours_observed: float = pa.Field(ge=0, description="the part of unallocated_capacity_gpu_hours telemetry saw; not in idle_gpu_hours")
    effective_cost_idle: float = pa.Field(description="the idle part: GPU time no work used (idle time and unallocated capacity)")
    idle_cost: float = pa.Field(description="effective cost of idle GPU time (the idle rule's lines)")
    unallocated_capacity_cost: float = pa.Field(description="effective cost of unallocated capacity (rules unallocated_capacity and owned_capacity:*), the cost of unallocated_capacity_gpu_hours")
    effective_gpu_hours: float = pa.Field(nullable=True, ge=0, description="observed GPU-hours x utilization; null where no utilization was measured")
    # No upper bound: effective and observed GPU-hours are rounded apart, so a team's ratio can
    # exceed 1 by a quantum over its observed hours.
    util_mean: float = pa.Field(nullable=True, ge=0, description="effective / observed GPU-hours")
    it_energy_kwh: float = pa.Field(ge=0)
    it_energy_kwh_measured: float = pa.Field(ge=0, description="part of it_energy_kwh from telemetry")
    facility_energy_kwh: float = pa.Field(ge=0, description="IT energy x PUE")
    facility_energy_kwh_low: float = pa.Field(ge=0)
    facility_energy_kwh_high: float = pa.Field(ge=0)
    co2e_kg: float = pa.Field(ge=0, description="location-based")
    co2e_kg_low: float = pa.Field(ge=0)
    co2e_kg_high: float = pa.Field(ge=0)
    co2e_market_kg: float = pa.Field(nullable=True, ge=0, description="market-based, over the energy whose zone has a factor")
    co2e_market_kg_low: float = pa.Field(nullable=True, ge=0)
    co2e_market_kg_high: float = pa.Field(nullable=True, ge=0)
    co2e_hourly_kg: float = pa.Field(ge=0, description="location-based, hour by hour where a series gives it")
    co2e_hourly_kg_low: float = pa.Field(ge=0)
    co2e_hourly_kg_high: float = pa.Field(ge=0)
    facility_energy_kwh_hourly: float = pa.Field(ge=0, description="facility energy with an hourly grid factor")
    facility_energy_kwh_market_na: float = pa.Field(ge=0, description="facility energy with no market-based factor")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team", "currency"]

    facility_energy_range = SLACK.check("facility_energy_range", "facility_energy_kwh",
                                        "The central estimate lies within its interval bounds (low x low, high x high).")

    co2e_range = SLACK.check("co2e_range", "co2e_kg", "As facility energy, with the grid intensity's bounds on top.")

    co2e_hourly_range = SLACK.check("co2e_hourly_range", "co2e_hourly_kg",
                                    "Hour-by-hour CO2e lies within its bounds too (PUE, and the annual factor where it stands in).")

    @pa.dataframe_check(columns=["effective_cost_idle", "idle_cost", "unallocated_capacity_cost"])
    def idle_part_in_two(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        """The idle part is idle time and unallocated capacity, each counted once."""
        parts = df["idle_cost"] + df["unallocated_capacity_cost"]
        return df["effective_cost_idle"].isna() | ((df["effective_cost_idle"] - parts).abs() < HALF_CENT)

    @pa.dataframe_check(columns=["facility_energy_kwh_hourly", "facility_energy_kwh"])
    def hourly_part_of_energy(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        """The hourly-matched energy is part of the facility energy."""
        return df["facility_energy_kwh_hourly"] <= df["facility_energy_kwh"] + ROUNDING_SLACK
