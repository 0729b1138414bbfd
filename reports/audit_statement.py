"""Page 1 of the footprint audit: the organisation's statement for the period.

Totals (CO2e of the GPUs' electricity location- and market-based, embodied CO2e, IT energy by
tier) are the sums of the rows that make them up: every team of the month, the unallocated row
included. Disclosures and CodeCarbon runs matched to a team's host are parts of that team's
figure, and runs or disclosures that match no host are outside it; neither is added again.
Every range of a total is the sum of its rows' interval bounds, as the build gives them (team_month,
team_audit_month), so the statement's ranges are the chargeback's (reports.render.RANGE_MEANING).
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from core.months import month_bounds
from pipelines.config import Config
from pipelines.reconstruct import DRAWS, P_HIGH, P_LOW, SEED, coefficients_by_id
from reports.audit_common import CO2E, meter
from reports.render import RANGE_MEANING, SCOPE_RULE

ADDS_UP = "adds up"
# The statement's lines: (label, scope, meter, unit); a CO2e line's scope is the split's
# (scope_lines). Energy by tier follows.
TOTALS = (
    ("Electricity, location-based", "", "co2e_location_kg", "kg CO2e"),
    ("Electricity, market-based", "", "co2e_market_kg", "kg CO2e"),
    ("Embodied, amortised over the hardware life", "", "co2e_embodied_kg", "kg CO2e"),
    ("Facility energy (IT energy x PUE)", "energy", "facility_energy_kwh", "kWh"),
    ("IT energy, all", "energy", "it_energy_kwh", "kWh"),
)
OUT_OF_BOUNDARY = (
    "networking equipment and traffic", "storage systems", "CPU-only instances and managed services",
    "employee travel, offices and end users", "upstream emissions of the electricity itself "
    "(Scope 3, category 3)",
)


def _meter(e: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in e["meters"] if m["meter"] == name)


# The split's lines: (label, ownership kind, scope_month column, statement meter); a line without
# a column is a scope the inputs cannot give (NOT_COMPUTED says why).
SPLIT = (
    ("Scope 2, location-based", "owned", "co2e_kg", "co2e_location_kg"),
    ("Scope 2, market-based", "owned", "co2e_market_kg", "co2e_market_kg"),
    ("Embodied, amortised over the hardware life: an allocation to use, beside the inventory", "owned",
     "co2e_embodied_kg", "co2e_embodied_kg"),
    ("Scope 3, category 2: capital goods acquired", "owned", None, None),
    ("Scope 3, category 1: cloud electricity, location-based", "cloud", "co2e_kg", "co2e_location_kg"),
    ("Scope 3, category 1: cloud electricity, market-based", "cloud", "co2e_market_kg", "co2e_market_kg"),
    ("Scope 3, category 1: cloud embodied", "cloud", "co2e_embodied_kg", "co2e_embodied_kg"),
)
ELECTRICITY = ("co2e_kg", "co2e_market_kg")
# Category 2 is the whole cradle-to-gate CO2e of the hardware acquired in the period, in the period
# of acquisition (GHG Protocol Scope 3 Standard, chapter 5): the amortised share above is not it.
NOT_COMPUTED = {"Scope 3, category 2": "not computed: it needs the GPUs and servers acquired in the period (what, "
                                       "how many, when), which the inputs do not hold; the amortised embodied share "
                                       "above is not a substitute"}


def _sum(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows]
    return None if any(v is None for v in values) else sum(values)


def scope_lines(scopes: list[dict[str, Any]], overhead: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """The organisation's CO2e by GHG scope: scope_month's rows of the month summed over teams,
    one line per scope and basis that has hardware (cloud, or owned: on-premises and colocation).
    With the host-overhead model, electricity lines grow by its fraction at each end, as its own
    row on page 1 does (value x (1 + central), low x (1 + low), high x (1 + high))."""
    out: list[dict[str, Any]] = []
    for label, kind, column, meter_name in SPLIT:
        mine = [r for r in scopes if (r["ownership"] == "cloud") == (kind == "cloud")]
        if not mine:
            continue
        if column is None:
            scope = label.split(":")[0]
            out.append({"label": label, "scope": scope, "ownership": ", ".join(sorted({r["ownership"] for r in mine})),
                        "meter": None, "unit": "kg CO2e", "value": None, "low": None, "high": None, "basis": "",
                        "note": NOT_COMPUTED[scope]})
            continue
        value, low, high = (_sum(mine, f"{column}{s}") for s in ("", "_low", "_high"))
        if overhead and column in ELECTRICITY and None not in (value, low, high):
            value, low, high = (x * (1 + overhead[k]) for x, k in ((value or 0.0, "value"), (low or 0.0, "low"),
                                                                  (high or 0.0, "high")))
        out.append({"label": label, "scope": mine[0]["embodied_scope" if column == "co2e_embodied_kg" else "electricity_scope"],
                    "ownership": ", ".join(sorted({r["ownership"] for r in mine})), "meter": meter_name, "unit": "kg CO2e",
                    "value": value, "low": low, "high": high,
                    "basis": "; ".join(sorted({r["ownership_source"] for r in mine if r["ownership_source"]}))})
    return out


def host_overhead_factor(host_overhead: bool) -> dict[str, float] | None:
    """The host-overhead fraction's value, low and high when the model is included."""
    if not host_overhead:
        return None
    c = coefficients_by_id()[HOST_OVERHEAD_ID]
    return {k: c[k] for k in ("value", "low", "high")}


def scope_of(split: list[dict[str, Any]], meter_name: str) -> str:
    """A total's scope column: the scopes its split lines fall in."""
    return " + ".join(dict.fromkeys(x["scope"] for x in split if x["meter"] == meter_name)) or "–"


def totals(teams: list[dict[str, Any]], split: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The statement's lines from the rows that add up: central = the sum of their centrals."""
    out: list[dict[str, Any]] = []
    for label, scope, name, unit in TOTALS:
        scope = scope or scope_of(split or [], name)
        ms = [_meter(t, name) for t in teams]
        missing = [t["name"] for t, m in zip(teams, ms) if m["value"] is None]
        if missing:
            reasons = sorted({m["method"] for m in ms if m["value"] is None})
            out.append({"label": label, "scope": scope, "meter": name, "unit": unit, "value": None, "low": None,
                        "high": None, "status": "not available",
                        "note": f"not available for {', '.join(missing)}: {'; '.join(reasons)}"})
            continue
        central, low, high = (sum(m[k] for m in ms) for k in ("value", "low", "high"))
        statuses = {m["status"] for m in ms if m["value"]}
        out.append({"label": label, "scope": scope, "meter": name, "unit": unit, "value": central, "low": low,
                    "high": high, "status": "estimated" if "estimated" in statuses else "measured" if statuses else "derived",
                    "note": ""})
    measured = sum(t["tiers"]["measured"] for t in teams)
    estimated = sum(t["tiers"]["estimated"] for t in teams)
    low, high = (sum(t["tiers"][k] for t in teams) for k in ("estimated_low", "estimated_high"))
    out.insert(len(out) - 1, {"label": "IT energy, measured (primary data: DCGM telemetry)", "scope": "energy",
                              "meter": "it_energy_kwh_measured", "unit": "kWh", "value": measured, "low": measured,
                              "high": measured, "status": "measured", "note": ""})
    out.insert(len(out) - 1, {"label": "IT energy, estimated (secondary data)", "scope": "energy",
                              "meter": "it_energy_kwh_estimated", "unit": "kWh", "value": estimated, "low": low,
                              "high": high, "status": "estimated" if estimated else "derived", "note": ""})
    return out


HOST_OVERHEAD_ID = "assumptions:server_overhead_fraction"


def host_overhead_entity(teams: list[dict[str, Any]]) -> dict[str, Any]:
    """Host power beyond the GPUs, from the host-overhead model: every team's energy and
    operational CO2e times the modelled fraction (drawn like any assumption). A row of its own
    that adds up, so the teams' figures stay the chargeback's."""
    c = coefficients_by_id()[HOST_OVERHEAD_ID]
    how = f"the teams' figure x {c['value']:g} ({c['low']:g} to {c['high']:g}), the host-overhead model"
    meters = []
    for name in ("it_energy_kwh", "facility_energy_kwh", "co2e_location_kg", "co2e_market_kg"):
        ms = [_meter(t, name) for t in teams]
        if any(m["value"] is None for m in ms):
            meters.append(meter(name, None, None, None, "not available", "a team's figure is not available", []))
            continue
        # interval bounds: the teams' low at the fraction's low, their high at its high
        value, low, high = (sum(m[k] for m in ms) * c[k] for k in ("value", "low", "high"))
        meters.append(meter(name, value, low, high, "estimated", how, [HOST_OVERHEAD_ID]))
    meters.append(meter("co2e_embodied_kg", 0.0, 0.0, 0.0, "derived", "in the host servers' embodied share already", []))
    it = meters[0]
    return {"kind": "model", "name": "host power beyond the GPUs", "meters": meters, "match": None,
            "co2e": [m for m in meters if m["meter"] in CO2E],
            "tiers": {"measured": 0.0, "estimated": it["value"] or 0.0, "estimated_low": it["low"] or 0.0,
                      "estimated_high": it["high"] or 0.0}}


def role(e: dict[str, Any]) -> str:
    if e["kind"] in ("team", "model"):
        return ADDS_UP
    m = e.get("match") or {}
    if m.get("status") == "matched":
        return f"part of {m['team']} (host {m['host']})"
    return "outside the total"


def rows(entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per entity: its three CO2e bases, its IT energy and whether it adds up."""
    out = []
    for e in entities:
        co2e = {m["meter"]: m for m in e["co2e"]}
        it = next((m for m in e["meters"] if m["meter"] == "it_energy_kwh"), None)
        out.append({"name": e["name"], "kind": e["kind"], "role": role(e), "adds_up": role(e) == ADDS_UP,
                    "why": (e.get("match") or {}).get("reason", ""), "host": (e.get("match") or {}).get("host"),
                    "it_energy": it, "location": co2e.get("co2e_location_kg"), "market": co2e.get("co2e_market_kg"),
                    "embodied": co2e.get("co2e_embodied_kg"), "note": ""})
    return out


def reasons(rows_: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Why each row outside the total is outside it, one note per distinct reason (numbered in the
    entity table), so page 1 states what is not matched without repeating it per run."""
    out: list[dict[str, Any]] = []
    for r in rows_:
        if r["adds_up"]:
            continue
        same = next((x for x in out if x["why"] == r["why"] and x["host"] == r["host"]), None)
        if same is None:
            same = {"why": r["why"], "host": r["host"], "names": []}
            out.append(same)
        same["names"].append(r["name"])
        r["note"] = f"note {out.index(same) + 1}"
    return out


def boundary(month: str | None, config: Config, teams: list[dict[str, Any]], host_overhead: bool) -> dict[str, Any]:
    """The stated boundary, as data: printed on page 2 and attached as statement.json."""
    zones = sorted({z for t in teams for z in t.get("zones", [])})
    included = [
        "GPU boards: energy measured by DCGM telemetry where it covers the GPUs (primary data), else billed GPU-hours "
        "x the board's TDP x an assumed power fraction (secondary data)",
        "facility overhead through the power usage effectiveness (PUE) of each zone",
        "embodied emissions of the GPUs and their host servers, amortised over the hardware life by GPU-hour",
    ]
    excluded = list(OUT_OF_BOUNDARY)
    if host_overhead:
        included.append("host power beyond the GPUs (CPUs, memory, fans) from the host-overhead model")
    else:
        excluded.insert(0, "host power beyond the GPUs (CPUs, memory, fans): not measured by DCGM; the host-overhead "
                           "model is not enabled")
    period = ""
    if month:
        start, end = month_bounds(month)
        period = f"{start:%Y-%m-%d} to {end - timedelta(days=1):%Y-%m-%d}"
    return {
        "period": month, "period_text": period,
        "consolidation": getattr(config, "consolidation", "operational control"),
        "zones": zones,
        "included": included,
        "excluded": excluded,
        "primary": "DCGM GPU energy counters and power samples; CodeCarbon runs (measured device energy)",
        "secondary": "billed GPU-hours x TDP x power fraction; PUE and grid intensity from published reference data; "
                     "embodied emissions from published life-cycle figures",
    }


def range_note() -> dict[str, Any]:
    """What the ranges mean: every figure's range, a published disclosure's and a CodeCarbon run's
    included, is its interval bounds (RANGE_MEANING, the chargeback's words). The consistency
    checks test a reported figure against a window of the reconstruct engine's Monte Carlo: a
    test, named as such where it is printed, never a figure's range."""
    disclosures = ("A published disclosure's page and a CodeCarbon run's print the same kind of range: interval bounds "
                   "over the assumptions that disclosure or run rests on, widened by the rounding of reported figures. "
                   "The tornado charts are one-at-a-time sensitivities (each assumption at its low or high end, the "
                   "others central): for reading which assumption matters, not ranges.")
    checks = (f"Test window: the {P_LOW:g}th to {P_HIGH:g}th percentiles of one seeded Monte Carlo over the same assumptions "
              f"(Latin hypercube, seed {SEED}, {DRAWS:,} draws; each assumption drawn from a PERT distribution over its "
              "published low, central and high values). A reported figure inside it is consistent; outside it but within "
              "the interval bounds, unusual; beyond the bounds, inconsistent. The window is a test, not a range.")
    return {"method": "interval bounds", "meaning": RANGE_MEANING, "disclosures": disclosures, "checks": checks,
            "seed": SEED, "draws": DRAWS, "p_low": P_LOW, "p_high": P_HIGH, "text": f"{RANGE_MEANING} {disclosures}"}


def statement_data(ctx: dict[str, Any]) -> dict[str, Any]:
    """statement.json: what page 1 and the boundary page print, as data."""
    s = ctx["statement"]

    def figure(m: dict[str, Any] | None) -> dict[str, Any] | None:
        return {k: m[k] for k in ("meter", "unit", "value", "low", "high", "status")} if m else None

    return {
        "month": ctx["month"], "totals": s["totals"], "scopes": s["scopes"], "scope_rule": SCOPE_RULE,
        "boundary": s["boundary"], "ranges": s["ranges"],
        "rows": [{"entity": r["name"], "kind": r["kind"], "in_total": r["role"], "adds_up": r["adds_up"], "why": r["why"],
                  **{k: figure(r[k]) for k in ("it_energy", "location", "market", "embodied")}} for r in s["rows"]],
    }
