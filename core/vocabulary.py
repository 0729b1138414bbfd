"""The words figures are made of: the meters allocation carries (with the quantum each rounds to),
the allocation rules and the charge categories they apply to. Definitions, not coefficients.

Rounding design (allocation_lines.sql applies it): every source group's amount of a meter is
split by largest remainder in whole quanta (a cent, a watt-hour, a gram, 1/1000 GPU-hour); the
sub-quantum residue of the source amount itself (a bill line of 32.7726 USD has 0.0026 USD below
the cent) stays on the line with the largest share, so allocated lines sum to the source exactly,
in DECIMAL(38, 12), and no line is ever off by more than one quantum from its share.
"""
from __future__ import annotations

from core.units import G_PER_KG, WH_PER_KWH

# Decimal places of each meter's quantum. Definitions, not coefficients: the cent of the billing
# currency, the watt-hour (1 / WH_PER_KWH kWh), the gram (1 / G_PER_KG kg), 1/1000 GPU-hour.
CENT_PLACES = 2
WH_PLACES = len(str(int(WH_PER_KWH))) - 1
G_PLACES = len(str(int(G_PER_KG))) - 1
MILLI_HOUR_PLACES = 3
METERS: dict[str, tuple[str, int]] = {
    "billed_cost": ("currency", CENT_PLACES),
    "effective_cost": ("currency", CENT_PLACES),
    "list_cost": ("currency", CENT_PLACES),
    "gpu_hours": ("h", MILLI_HOUR_PLACES),              # billed GPU-hours
    "gpu_hours_observed": ("h", MILLI_HOUR_PLACES),     # telemetry GPU-hours (coverage)
    "effective_gpu_hours": ("h", MILLI_HOUR_PLACES),    # observed GPU-hours x utilization
    "it_energy_kwh": ("kWh", WH_PLACES),
    "it_energy_kwh_measured": ("kWh", WH_PLACES),
    "facility_energy_kwh": ("kWh", WH_PLACES),
    "facility_energy_kwh_low": ("kWh", WH_PLACES),
    "facility_energy_kwh_high": ("kWh", WH_PLACES),
    "co2e_kg": ("kg", G_PLACES),
    "co2e_kg_low": ("kg", G_PLACES),
    "co2e_kg_high": ("kg", G_PLACES),
    "co2e_market_kg": ("kg", G_PLACES),
    "co2e_market_kg_low": ("kg", G_PLACES),
    "co2e_market_kg_high": ("kg", G_PLACES),
    "co2e_hourly_kg": ("kg", G_PLACES),              # location-based, hour by hour where a series gives it
    "co2e_hourly_kg_low": ("kg", G_PLACES),
    "co2e_hourly_kg_high": ("kg", G_PLACES),
    "facility_energy_kwh_hourly": ("kWh", WH_PLACES),     # the part of facility energy with an hourly factor
    "facility_energy_kwh_market_na": ("kWh", WH_PLACES),  # ... with no market-based factor
}

# How a category of cost that no workload names is shared among teams (pipelines/config.py).
RULES = ("proportional", "even", "weights", "unallocated")
CATEGORIES = ("idle", "untagged", "shared_services", "commitment", "credits")

# How a shared GPU-hour is charged (pipelines/sql/20_intermediate/int_gpu_shares.sql, docs/sharing.md):
# by what pods requested, by what they used, or by the larger of the two; a MIG GPU by compute or
# memory slices; its slices no pod held left as unallocated capacity or shared by slice-time.
SHARING_MODES = ("whole", "mig", "time_sliced", "fractional")
CHARGE_BY = ("request", "use", "larger")
MIG_SLICES = ("compute", "memory")
MIG_UNUSED = ("unallocated", "slice_time")
SHARING_DEFAULTS = {"charge_by": "request", "mig_slices": "compute", "mig_unused": "unallocated"}

# The unit each meter of a footprint is stated in (a reconstruction's and the audit's).
METER_UNITS = {
    "accelerator_hours": "h", "it_energy_kwh": "kWh", "facility_energy_kwh": "kWh",
    "co2e_location_kg": "kg", "co2e_market_kg": "kg", "co2e_embodied_kg": "kg", "cost_usd": "USD",
    "train_flops": "FLOP", "mfu": "fraction", "cost_usd_per_million_tokens": "USD/Mtok",
    "energy_j_per_token": "J/token", "co2e_g_per_million_tokens": "g/Mtok",
}
