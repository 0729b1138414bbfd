"""The methodology's first part: each method in words, its formula, and the assumptions it rests
on as reference rows (id, value, unit, low, high, source), for an auditor new to the tool.

Only words live here; every number printed comes from the reference data or the unit and
sampling constants it names (templates/partials/method.html prints it).
"""
from __future__ import annotations

from typing import Any

from core.units import H_PER_YEAR
from core.vocabulary import CATEGORIES, RULES
from pipelines.config import DEFAULT_RULES, OWNERSHIP
from pipelines.reconstruct import DRAWS, P_HIGH, P_LOW, PERT_LAMBDA, SEED
from reports.labels import coefficient_label, label
from reports.render import RANGE_MEANING, SCOPE_RULE
from sources.reference_data import GRID_LEVELS, read_rows

# Each method: (key, title, what it gives, formula, assumptions (reference ids), tables it reads
# per item (by name), notes). The assumptions are rows of the assumptions table; the tables hold
# one row per GPU model, zone or item, printed in full in the tables part.
METHODS: tuple[dict[str, Any], ...] = (
    {"key": "measured", "title": "IT energy, measured (primary data)",
     "what": "The energy the GPU boards drew, per GPU and hour, from DCGM telemetry: the difference of the board's "
             "cumulative energy counter across the hour; where the counter is missing, the mean of the power samples "
             "times the time they cover. A gap longer than the expected sampling interval times the gap multiple (both "
             "set in the configuration) is spread from the counter, never invented; a counter reset starts a new series.",
     "formula": "E_IT = sum over the GPU's hours of (counter at the end − counter at the start); capped at TDP × the "
                "board power tolerance × the hour, with the excess reported",
     "assumptions": ("board_power_tolerance",), "tables": ("GPU specifications (TDP per model)",),
     "notes": "Measured energy has no range of its own: its low and high equal the measurement."},
    {"key": "estimated", "title": "IT energy, estimated (secondary data)",
     "what": "For billed GPU-hours no telemetry covers: the board's thermal design power (TDP) times an assumed "
             "average fraction of it.",
     "formula": "E_IT = uncovered GPU-hours × TDP × f, where f is the power fraction of TDP",
     "assumptions": ("gpu_power_fraction_of_tdp",), "tables": ("GPU specifications (TDP per model, with its range)",),
     "notes": "A GPU model the specifications do not list has no estimate: it is reported as unknown, never guessed."},
    {"key": "facility", "title": "Facility energy",
     "what": "IT energy grossed up by the data centre's power usage effectiveness (PUE): cooling, power conversion "
             "and the building's other loads.",
     "formula": "E_facility = E_IT × PUE(zone)",
     "assumptions": ("pue_unknown",), "tables": ("PUE per provider, region or facility type",),
     "notes": "The provider's published PUE for the region where there is one; else its fleet value; else the "
              "assumed value for an unknown facility."},
    {"key": "location", "title": "CO2e, location-based",
     "what": "Facility energy times the average emission factor of the grid the data centre draws from: hour by "
             "hour where an hourly series is loaded for the zone, else the zone's annual factor. The annual factor is "
             "the most specific grid average the reference data holds, in the order of the GHG Protocol Scope 2 "
             f"Guidance: {', '.join(GRID_LEVELS.values())}. A published disclosure's location takes the same order.",
     "formula": "CO2e_location = sum over hours of E_facility(h) × I(zone, h); I the annual factor where no hourly one",
     "assumptions": ("grid_intensity_unknown_location",),
     "tables": ("Grid intensity per country, region and cloud region, by year",
                "Grid zones: each cloud region's grid zone and country"),
     "notes": "Life-cycle factors unless the configuration selects direct (combustion) factors for hourly series. "
              "A zone whose grid zone and country are both unknown takes the world's row, and its report names the "
              "row; a published disclosure that states no location, or one that resolves to none, is reconstructed "
              "with the wide range above instead."},
    {"key": "market", "title": "CO2e, market-based",
     "what": "The same electricity with the factors of the contracts that cover it, in the order of the GHG Protocol "
             "Scope 2 Guidance's quality criteria: energy attribute certificates and contracts first (within each "
             "instrument's volume, market and period), then supplier-specific factors, then the residual mix of the "
             "grid; where none of these exists, the figure is not available rather than the location-based one.",
     "formula": "CO2e_market = E_covered_by_instruments × their factor + E_supplier × supplier factor "
                "+ E_rest × residual mix",
     "assumptions": (), "tables": ("Residual mix factors per zone (grid intensity, market basis)",),
     "notes": "Location-based and market-based figures measure the same electricity and are never added."},
    {"key": "embodied", "title": "Embodied CO2e, amortised",
     "what": "The emissions of making the accelerators (cradle to gate), spread evenly over their service life and "
             "charged by the GPU-hour.",
     "formula": "CO2e_embodied = GPU-hours × embodied CO2e per accelerator / (lifetime in years × hours a year)",
     "assumptions": ("hardware_lifetime_years", "gpu_embodied_kgco2e_unknown"),
     "tables": ("Embodied emissions per accelerator model",),
     "notes": "The low end takes the lowest embodied figure over the longest life, the high end the other way round. "
              "For owned hardware this share is an allocation to use, reported beside the inventory: it is not "
              "Scope 3, category 2 (capital goods), which counts what was acquired, whole, in the year of acquisition."},
    {"key": "overhead", "title": "Host power beyond the GPUs (when enabled)",
     "what": "CPUs, memory and fans of the host servers, which DCGM does not measure: a modelled share added on top "
             "of the GPUs' energy, only when the configuration includes it.",
     "formula": "E_host = E_GPUs × host-overhead fraction",
     "assumptions": ("server_overhead_fraction",), "tables": (), "notes": ""},
)

# What each allocation category holds; its rule (and its default) come from the vocabulary and
# the labels, as the reports name them.
ALLOCATION = {
    "direct": "a charge or GPU-hour whose team is known (provider split, billing tag, rule, account, or the Kubernetes "
              "namespace of the workload on the GPU) is that team's alone",
    "idle": "GPU time telemetry saw with no workload on a billed resource (idle), and an owned cluster's GPU-hours no "
            "Slurm job held (unallocated capacity): two figures, reported apart",
    "untagged": "a billed resource for which no team resolves",
    "shared_services": "support, tax, network and storage with no resource and no team",
    "commitment": "savings plan and reservation fees",
    "credits": "credits and refunds that follow no identifiable charge",
}


def _assumption(row: dict[str, str]) -> dict[str, Any]:
    return {"id": f"assumptions:{row['assumption_id']}", "label": coefficient_label(f"assumptions:{row['assumption_id']}"),
            "value": float(row["value"]), "unit": row["unit"], "low": float(row["low"]), "high": float(row["high"]),
            "source": row["source"]}


def method_context() -> dict[str, Any]:
    """What the method part prints: the methods with their assumption rows, allocation, ranges,
    scopes and the sampling constants of the consistency checks."""
    rows = {r["assumption_id"]: r for r in read_rows("assumptions")}
    methods = [{**m, "assumptions": [_assumption(rows[a]) for a in m["assumptions"]]} for m in METHODS]
    allocation = [{"category": label("direct", "category"), "what": ALLOCATION["direct"], "default": None}]
    allocation += [{"category": label(c, "category"), "what": ALLOCATION[c], "default": label(DEFAULT_RULES[c], "rule_basis")}
                   for c in CATEGORIES]
    return {"methods": methods, "allocation": allocation, "rules": [label(r, "rule_basis") for r in RULES],
            "range_meaning": RANGE_MEANING, "scope_rule": SCOPE_RULE, "ownership": OWNERSHIP,
            "h_per_year": H_PER_YEAR, "p_low": P_LOW, "p_high": P_HIGH, "draws": DRAWS, "seed": SEED,
            "pert_lambda": PERT_LAMBDA}
