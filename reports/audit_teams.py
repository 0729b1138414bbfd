"""A month's team footprints for the footprint audit, laid out like a disclosure: meters with
low-high ranges and status, location-based, market-based and embodied CO2e side by side, the
tornado of the assumptions that drive them, and what to measure for the audit to need none.

Energy and operational CO2e are team_month's (the allocation engine's totals, as the chargeback
shows them); their ranges, the zones the energy sits in and the coefficients each meter rests on
come from team_energy_lines; embodied CO2e from the team's billed GPU-hours per GPU model through
the reconstruct engine's estimator, so a team and a disclosure amortize hardware the same way.
"""
from __future__ import annotations

import fnmatch
from collections import defaultdict
from typing import Any

import duckdb

from core.units import G_PER_KG
from pipelines.quality import rows_as_dicts
from pipelines.reconstruct import coefficients_by_id, embodied_for_hours, meter_with_range, reference_coef, tornado_of_parts
from pipelines.reconstruct_sampling import Q, exact
from reports.audit_common import CO2E, co2e_chart, mc_range, meter, tornado_entry, what_to_publish
from reports.render import number

# What a platform team would measure or obtain to replace each assumption (first match wins).
MEASURE = (
    ("assumptions:gpu_power_fraction_of_tdp", "DCGM telemetry on these GPUs, so their energy is measured rather than "
                                              "GPU-hours x TDP x a power fraction"),
    ("gpu_specs:*:tdp_w", "DCGM telemetry on these GPUs, so their energy is measured rather than "
                          "GPU-hours x TDP x a power fraction"),
    ("assumptions:pue_unknown", "the facility's metered PUE for the month"),
    ("pue:*", "the facility's metered PUE for the month (here the provider's published average)"),
    ("assumptions:grid_intensity*", "the zone of every GPU resource (cloud region) and its grid intensity"),
    ("grid_intensity:*:residual_mix", "the energy's contractual instruments (RECs, GOs, PPAs) or the supplier's own factor, "
                                      "with source and year, instead of the residual mix"),
    ("grid_intensity:*", "the zone's grid intensity for the month (hourly, from the grid operator or a data provider)"),
    ("assumptions:hardware_lifetime_years", "the hardware's service life from the asset register"),
    ("assumptions:accelerators_per_server", "GPUs per server from the hardware inventory"),
    ("assumptions:gpu_embodied_kgco2e_unknown", "the GPU model of every GPU resource, and its vendor's product "
                                                "carbon footprint"),
    ("embodied:*", "the vendor's product carbon footprint (LCA) of the GPUs and host servers"),
)
# The coefficients a line's meter rests on, beyond its IT energy's: PUE, then grid intensity.
METER_IDS = {"it_energy_kwh": (), "facility_energy_kwh": ("pue_id",), "co2e_kg": ("pue_id", "intensity_id")}


def team_entities(con: duckdb.DuckDBPyConnection, month: str) -> list[dict[str, Any]]:
    lines: dict[str, list[dict]] = defaultdict(list)
    for line in rows_as_dicts(con, "select * from team_energy_lines where month = ?", [month]):
        lines[line["team"]].append(line)
    hours = gpu_hours_by_model(con, month)
    market = market_by_zone(con, month)
    return [team_entity(t, lines.get(t["team"], []), hours.get(t["team"], {}), month, market)
            for t in rows_as_dicts(con, "select * from team_month where month = ? order by co2e_kg desc, team", [month])]


def market_by_zone(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, dict[str, Any]]:
    """{zone: carbon_month row with its claims (market_basis_month)}: what each zone's market-based
    factor rests on, or why it is not available."""
    zones = {r["zone"]: {**r, "claims": []} for r in rows_as_dicts(con, "select * from carbon_month where month = ?", [month])}
    for c in rows_as_dicts(con, """select * from market_basis_month where month = ? and zone is not null
                                   order by claim_kind, claim""", [month]):
        if c["zone"] in zones:
            zones[c["zone"]]["claims"].append(c)
    return zones


def gpu_hours_by_model(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, dict[str | None, float]]:
    """{team: {gpu_model: billed GPU-hours as allocated}}; None for a resource of unknown model."""
    out: dict[str, dict[str | None, float]] = defaultdict(dict)
    for team, model, hours in con.execute("""
            select team, gpu_model, gpu_hours from team_gpu_model_month
            where month = ? and gpu_hours > 0""", [month]).fetchall():
        out[team][model] = hours
    return out


def line_ids(line: dict[str, Any], meter_name: str) -> list[str]:
    """The coefficients one energy line's meter rests on (measured IT energy: none)."""
    return [*(line["energy_assumption_ids"] or []), *(line[k] for k in METER_IDS[meter_name] if line[k])]


def _ids(lines: list[dict], meter_name: str) -> list[str]:
    return sorted({i for line in lines for i in line_ids(line, meter_name)})


# Which Monte Carlo slot a coefficient is drawn in, by coefficient-id pattern (first match wins):
# the reconstruct engine's slots, so a team's PUE and a disclosure's PUE are drawn alike.
SLOT_OF = (("gpu_specs:*:tdp_w", "tdp"), ("convention_tdp:*", "tdp"), ("assumptions:gpu_power_fraction_of_tdp", "power_fraction"),
           # the host draws more as its GPUs do: drawn with the GPUs' power fraction (comonotonic)
           ("assumptions:server_overhead_fraction", "power_fraction"),
           ("pue:*", "pue"), ("operators:*:pue", "pue"), ("assumptions:pue*", "pue"),
           ("grid_intensity:*", "grid_intensity"), ("assumptions:grid_intensity*", "grid_intensity"))


def coefficient_ratio(cid: str) -> Q:
    """A reference coefficient over its central value: 1 at the centre, drawn over its range."""
    c = coefficients_by_id().get(cid)
    slot = next((s for pattern, s in SLOT_OF if fnmatch.fnmatchcase(cid, pattern)), None)
    if c is None or slot is None or not c["value"]:
        return exact(1.0)
    return reference_coef(slot, c) / c["value"]


def line_q(line: dict[str, Any], key: str, meter_name: str) -> Q:
    """One energy line's share of a meter as an uncertain quantity: its central figure times the
    ratio of every coefficient it rests on (measured IT energy: none)."""
    q = exact(line[key] or 0.0)
    for cid in line_ids(line, meter_name):
        q = q * coefficient_ratio(cid)
    return q


def team_entity(t: dict[str, Any], lines: list[dict], hours_by_gpu: dict[str | None, float], month: str,
                market: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    parts = {name: [line_q(line, key, ids) for line in lines if line[key]]
             for name, key, ids in (("it_energy_kwh", "it_energy_kwh", "it_energy_kwh"),
                                    ("facility_energy_kwh", "facility_energy_kwh", "facility_energy_kwh"),
                                    ("co2e_location_kg", "co2e_kg", "co2e_kg"))}
    embodied, embodied_rows, findings, embodied_q = _embodied(hours_by_gpu)
    parts["co2e_embodied_kg"] = [embodied_q] if embodied_q is not None else []
    market_meter, parts["co2e_market_kg"] = _market(t, lines, market or {})
    meters = [
        meter("accelerator_hours", t["gpu_hours"], t["gpu_hours"], t["gpu_hours"], "derived",
              "billed GPU-hours (sum of usage lines)", []),
        *(_operational(t, lines, parts) if t["it_energy_kwh"] else
          [meter(name, 0.0, 0.0, 0.0, "derived", "no GPU energy in the month", [])
           for name in ("it_energy_kwh", "facility_energy_kwh", "co2e_location_kg")]),
        market_meter,
        embodied,
    ]
    # Two tornados, not the disclosures' three: a team's facility energy rests on no assumption that
    # its location-based CO2e does not show (each chart costs about a second of PDF rendering).
    operational = tornado_of_parts(t["co2e_kg"], [(line["co2e_kg"] or 0.0, line_ids(line, "co2e_kg")) for line in lines],
                                   coefficients_by_id())
    tornados = [tornado_entry(name, central, rows) for name, central, rows in (
        ("co2e_location_kg", t["co2e_kg"], operational), ("co2e_embodied_kg", embodied["value"], embodied_rows)) if rows]
    ids = [i for m in meters for i in m["assumptions"]]
    zones = sorted({line["zone"] or "" for line in lines} - {""})
    return {"kind": "team", "name": t["team"], "source": f"team footprint {month}", "inputs": {}, "match": None,
            "meters": meters, "checks": [], "flags": [], "findings": findings, "tornados": tornados,
            "publish": what_to_publish(ids, MEASURE), "co2e": [m for m in meters if m["meter"] in CO2E],
            "co2e_chart": co2e_chart(meters), "parts": parts,
            "tiers": {"measured": t["it_energy_kwh_measured"], "estimated": t["it_energy_kwh"] - t["it_energy_kwh_measured"],
                      "estimated_parts": [line_q(line, "it_energy_kwh", "it_energy_kwh") for line in lines
                                          if line["basis"] == "estimated" and line["it_energy_kwh"]]},
            "zones": zones, "market_claims": [c for z in zones for c in (market or {}).get(z, {}).get("claims", []) if c["applied_kwh"]]}


def _operational(t: dict[str, Any], lines: list[dict], parts: dict[str, list[Q]]) -> list[dict[str, Any]]:
    """IT energy, facility energy and location-based CO2e of a team that used GPUs: team_month's
    figures with their drawn ranges, and the coefficients each rests on."""
    # All of it measured (floats summed in another order may differ in the last bits).
    measured = abs(t["it_energy_kwh_measured"] - t["it_energy_kwh"]) <= 1e-9 * max(1.0, abs(t["it_energy_kwh"]))
    return [
        meter("it_energy_kwh", t["it_energy_kwh"], *mc_range(t["it_energy_kwh"], parts["it_energy_kwh"]),
              "measured" if measured else "estimated",
              "measured by DCGM" if measured else f"{number(t['it_energy_kwh_measured'], 1)} kWh measured by DCGM, the rest "
              "billed GPU-hours x TDP x power fraction" if t["it_energy_kwh_measured"] else
              "billed GPU-hours x TDP x power fraction (no telemetry on these GPUs)", _ids(lines, "it_energy_kwh")),
        meter("facility_energy_kwh", t["facility_energy_kwh"], *mc_range(t["facility_energy_kwh"], parts["facility_energy_kwh"]),
              "estimated", "IT energy x PUE of the zone", _ids(lines, "facility_energy_kwh")),
        meter("co2e_location_kg", t["co2e_kg"], *mc_range(t["co2e_kg"], parts["co2e_location_kg"]), "estimated",
              "facility energy x grid intensity of the zone", _ids(lines, "co2e_kg")),
    ]


def _market(t: dict[str, Any], lines: list[dict], zones: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[Q]]:
    """Facility energy x each zone's market-based factor (instruments, supplier factors, residual
    mix: carbon_month, market_basis_month); not available (and why) when a zone the team's energy
    sits in has none: a partial sum would understate it. With the parts its range is drawn from."""
    used = [line for line in lines if line["facility_energy_kwh"]]
    if not used:
        return meter("co2e_market_kg", 0.0, 0.0, 0.0, "derived", "no energy in the month", []), []
    in_zones = sorted({line["zone"] or "lines without a zone" for line in used})
    missing = sorted({line["zone"] or "lines without a zone" for line in used if line["co2e_market_kg"] is None})
    if missing:
        why = "; ".join(zones.get(z, {}).get("market_reason") or f"{z}: no market-based factor" for z in missing)
        return meter("co2e_market_kg", None, None, None, "not available", why, []), []
    claims = [c for z in in_zones for c in zones.get(z, {}).get("claims", []) if c["applied_kwh"]]
    basis = "; ".join(f"{c['zone']}: {_claim_text(c)} on {number(c['applied_kwh'], 1)} kWh" for c in claims)
    ids = sorted({c["coefficient_id"] for c in claims if c["coefficient_id"]} | set(_ids(lines, "facility_energy_kwh")))
    parts = [q for line in used for q in _market_parts(line, zones.get(line["zone"], {}))]
    return meter("co2e_market_kg", t["co2e_market_kg"], *mc_range(t["co2e_market_kg"], parts), "estimated",
                 f"facility energy x each zone's market-based factor ({basis or 'no claim'})", ids), parts


def _market_parts(line: dict[str, Any], zone: dict[str, Any]) -> list[Q]:
    """One team line's market-based CO2e as the Monte Carlo engine draws it. The zone's claims are
    taken in the order int_market_claims fills them: every claim but the last to take energy is a
    fixed volume at a contract's factor (exact); the marginal one (the residual mix, a supplier
    factor without a volume, or an instrument with volume to spare) takes whatever energy the draw
    has beyond them, at its factor (the residual mix drawn over its range, in the grid-intensity
    slot: what is left of the same grid). The line holds its share of the zone's energy of each."""
    claims = [c for c in zone.get("claims", []) if c["applied_kwh"]]
    marginal = next((c for c in claims if c["claim_kind"] == "residual_mix"), None) or next(
        (c for c in reversed(claims) if c["available_kwh"] is None or c["applied_kwh"] < c["available_kwh"]), None)
    if marginal is None or not claims[0]["consumption_kwh"]:
        return [line_q(line, "co2e_market_kg", "facility_energy_kwh")]
    share = line["facility_energy_kwh"] / claims[0]["consumption_kwh"]
    fixed = [c for c in claims if c is not marginal]
    kg_per_kwh = marginal["g_per_kwh"] / G_PER_KG
    factor = coefficient_ratio(marginal["coefficient_id"]) if marginal["coefficient_id"] else exact(1.0)
    return [exact(share * sum(c["co2e_kg"] for c in fixed)),
            line_q(line, "facility_energy_kwh", "facility_energy_kwh") * kg_per_kwh * factor,
            factor * (-share * sum(c["applied_kwh"] for c in fixed) * kg_per_kwh)]


def _claim_text(c: dict[str, Any]) -> str:
    """One claim with its provenance: what it is, its factor, source and year."""
    what = c["claim"] if c["claim_kind"] != "residual_mix" else "residual mix"
    kind = f" ({c['instrument_type']})" if c.get("instrument_type") else ""
    year = c["year"] if c["year"] is not None else "year not declared"
    return f"{what}{kind} {c['g_per_kwh']:g} g/kWh, {c['source']}, {year}"


def _embodied(hours_by_gpu: dict[str | None, float]) -> tuple[dict[str, Any], list[dict], list[str], Q | None]:
    """(meter, tornado rows, findings, the uncertain figure) for the team's billed GPU-hours."""
    if not hours_by_gpu:
        return meter("co2e_embodied_kg", 0.0, 0.0, 0.0, "derived", "no GPU-hours in the month", []), [], [], None
    q, how = embodied_for_hours(hours_by_gpu)
    m, rows = meter_with_range(q, how, "co2e_embodied_kg")
    unknown = hours_by_gpu.get(None)
    findings = [f"{number(unknown)} GPU-hours are on resources of unknown GPU model: their embodied CO2e uses "
                "assumptions:gpu_embodied_kgco2e_unknown"] if unknown else []
    return {"meter": "co2e_embodied_kg", "reported": None, "estimate": None, **m}, rows, findings, q
