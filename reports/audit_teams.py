"""A month's team footprints for the footprint audit, laid out like a disclosure: meters with
low-high ranges and status, location-based, market-based and embodied CO2e side by side, the
tornado of the assumptions that drive them, and what to measure for the audit to need none.

Energy and operational CO2e are team_month's (the allocation engine's totals, as the chargeback
shows them); their ranges, the zones the energy sits in and the coefficients each meter rests on
come from team_energy_lines; embodied CO2e from the team's billed GPU-hours per GPU model through
the reconstruct engine's estimator, so a team and a disclosure amortize hardware the same way.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import duckdb

from pipelines.quality import rows_as_dicts
from pipelines.reconstruct import coefficients_by_id, embodied_for_hours, meter_with_range, tornado_of_parts
from reports.audit import CO2E, co2e_chart, meter, tornado_entry, what_to_publish

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


def _scaled_range(central: float, lines: list[dict], key: str) -> tuple[float, float]:
    """The team's range of a meter: its lines' interval bounds, scaled to team_month's total
    (which the allocation rounded per line)."""
    total = sum(line[key] or 0.0 for line in lines)
    if not total:
        return central, central
    return (central * sum(line[f"{key}_low"] or 0.0 for line in lines) / total,
            central * sum(line[f"{key}_high"] or 0.0 for line in lines) / total)


def team_entity(t: dict[str, Any], lines: list[dict], hours_by_gpu: dict[str | None, float], month: str,
                market: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    # All of it measured (floats summed in another order may differ in the last bits).
    measured = abs(t["it_energy_kwh_measured"] - t["it_energy_kwh"]) <= 1e-9 * max(1.0, abs(t["it_energy_kwh"]))
    it_low, it_high = _scaled_range(t["it_energy_kwh"], lines, "it_energy_kwh")
    embodied, embodied_rows, findings = _embodied(hours_by_gpu)
    meters = [
        meter("accelerator_hours", t["gpu_hours"], t["gpu_hours"], t["gpu_hours"], "derived",
              "billed GPU-hours (sum of usage lines)", []),
        meter("it_energy_kwh", t["it_energy_kwh"], it_low, it_high, "derived" if measured else "estimated",
              "measured by DCGM" if measured else f"{t['it_energy_kwh_measured']:,.1f} kWh measured by DCGM, the rest "
              "billed GPU-hours x TDP x power fraction", _ids(lines, "it_energy_kwh")),
        meter("facility_energy_kwh", t["facility_energy_kwh"], t["facility_energy_kwh_low"], t["facility_energy_kwh_high"],
              "estimated", "IT energy x PUE of the zone", _ids(lines, "facility_energy_kwh")),
        meter("co2e_location_kg", t["co2e_kg"], t["co2e_kg_low"], t["co2e_kg_high"], "estimated",
              "facility energy x grid intensity of the zone", _ids(lines, "co2e_kg")),
        _market(t, lines, market or {}),
        embodied,
    ]
    # Two tornados, not the disclosures' three: a team's facility energy rests on no assumption that
    # its location-based CO2e does not show (each chart costs about a second of PDF rendering).
    operational = tornado_of_parts(t["co2e_kg"], [(line["co2e_kg"] or 0.0, line_ids(line, "co2e_kg")) for line in lines],
                                   coefficients_by_id())
    tornados = [tornado_entry(name, central, rows) for name, central, rows in (
        ("co2e_location_kg", t["co2e_kg"], operational), ("co2e_embodied_kg", embodied["value"], embodied_rows)) if rows]
    ids = [i for m in meters for i in m["assumptions"]]
    return {"kind": "team", "name": t["team"], "source": f"team_month {month}", "inputs": {},
            "meters": meters, "checks": [], "flags": [], "findings": findings, "tornados": tornados,
            "publish": what_to_publish(ids, MEASURE), "co2e": [m for m in meters if m["meter"] in CO2E],
            "co2e_chart": co2e_chart(meters)}


def _market(t: dict[str, Any], lines: list[dict], zones: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Facility energy x each zone's market-based factor (instruments, supplier factors, residual
    mix: carbon_month, market_basis_month); not available (and why) when a zone the team's energy
    sits in has none: a partial sum would understate it."""
    used = [line for line in lines if line["facility_energy_kwh"]]
    if not used:
        return meter("co2e_market_kg", 0.0, 0.0, 0.0, "derived", "no energy in the month", [])
    in_zones = sorted({line["zone"] or "lines without a zone" for line in used})
    missing = sorted({line["zone"] or "lines without a zone" for line in used if line["co2e_market_kg"] is None})
    if missing:
        why = "; ".join(zones.get(z, {}).get("market_reason") or f"{z}: no market-based factor" for z in missing)
        return meter("co2e_market_kg", None, None, None, "not available", why, [])
    claims = [c for z in in_zones for c in zones.get(z, {}).get("claims", []) if c["applied_kwh"]]
    basis = "; ".join(f"{c['zone']}: {_claim_text(c)} on {c['applied_kwh']:,.1f} kWh" for c in claims)
    ids = sorted({c["coefficient_id"] for c in claims if c["coefficient_id"]} | set(_ids(lines, "facility_energy_kwh")))
    return meter("co2e_market_kg", t["co2e_market_kg"], t["co2e_market_kg_low"], t["co2e_market_kg_high"], "estimated",
                 f"facility energy x each zone's market-based factor ({basis or 'no claim'})", ids)


def _claim_text(c: dict[str, Any]) -> str:
    """One claim with its provenance: what it is, its factor, source and year."""
    what = c["claim"] if c["claim_kind"] != "residual_mix" else "residual mix"
    kind = f" ({c['instrument_type']})" if c.get("instrument_type") else ""
    year = c["year"] if c["year"] is not None else "year not declared"
    return f"{what}{kind} {c['g_per_kwh']:g} g/kWh, {c['source']}, {year}"


def _embodied(hours_by_gpu: dict[str | None, float]) -> tuple[dict[str, Any], list[dict], list[str]]:
    """(meter, tornado rows, findings) for the team's billed GPU-hours."""
    if not hours_by_gpu:
        return meter("co2e_embodied_kg", 0.0, 0.0, 0.0, "derived", "no GPU-hours in the month", []), [], []
    q, how = embodied_for_hours(hours_by_gpu)
    m, rows = meter_with_range(q, how, "co2e_embodied_kg")
    unknown = hours_by_gpu.get(None)
    findings = [f"{unknown:,.0f} GPU-hours are on resources of unknown GPU model: their embodied CO2e uses "
                "assumptions:gpu_embodied_kgco2e_unknown"] if unknown else []
    return {"meter": "co2e_embodied_kg", "reported": None, **m}, rows, findings
