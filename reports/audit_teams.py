"""A month's team footprints for the footprint audit, laid out like a disclosure: meters with
low-high ranges and status, location-based, market-based and embodied CO2e side by side, the
tornado of the assumptions that drive them, and what to measure for the audit to need none.

Every figure and range is a mart's, computed in the build: energy and operational CO2e with their
ranges are team_month's (the chargeback's, to the digit); the IT energy's bounds, embodied CO2e and
the tornado rows are team_audit_month's and team_sensitivity_month's (pipelines.audit_marts). The
zones the energy sits in and the coefficients each meter rests on come from team_energy_lines.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import duckdb

from core.sql import rows_as_dicts
from pipelines.audit_marts import ID_SEPARATOR, line_ids
from reports.audit_common import CO2E, co2e_chart, meter, tornado_entry, what_to_publish
from reports.render import number

# What a platform team would measure or obtain to replace each assumption (first match wins).
MEASURE = (
    ("assumptions:gpu_power_fraction_of_tdp", "DCGM telemetry on these GPUs, so their energy is measured rather than "
                                              "GPU-hours x TDP x a power fraction"),
    ("gpu_specs:*:tdp_w", "DCGM telemetry on these GPUs, so their energy is measured rather than "
                          "GPU-hours x TDP x a power fraction"),
    ("assumptions:idle_power_fraction_of_tdp", "DCGM telemetry on the GPUs no job held, so their idle draw is measured "
                                               "rather than TDP x an idle fraction"),
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
    audit = {r["team"]: r for r in rows_as_dicts(con, "select * from team_audit_month where month = ?", [month])}
    tornados: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rows_as_dicts(con, """select * from team_sensitivity_month where month = ?
                                   order by abs(high - low) desc, assumption""", [month]):
        tornados[r["team"]][r["meter"]].append({"assumption": r["assumption"], "low": r["low"], "high": r["high"]})
    market = market_by_zone(con, month)
    return [team_entity(t, lines.get(t["team"], []), audit[t["team"]], tornados[t["team"]], month, market)
            for t in rows_as_dicts(con, "select * exclude (billing_currencies) from team_month_reporting where month = ? order by co2e_kg desc, team", [month])]


def market_by_zone(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, dict[str, Any]]:
    """{zone: carbon_month row with its claims (market_basis_month)}: what each zone's market-based
    factor rests on, or why it is not available."""
    zones = {r["zone"]: {**r, "claims": []} for r in rows_as_dicts(con, "select * from carbon_month where month = ?", [month])}
    for c in rows_as_dicts(con, """select * from market_basis_month where month = ? and zone is not null
                                   order by claim_kind, claim""", [month]):
        if c["zone"] in zones:
            zones[c["zone"]]["claims"].append(c)
    return zones


def _ids(lines: list[dict], meter_name: str) -> list[str]:
    return sorted({i for line in lines for i in line_ids(line, METER_IDS[meter_name])})


def team_entity(t: dict[str, Any], lines: list[dict], audit: dict[str, Any], tornado_rows: dict[str, list[dict]],
                month: str, market: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A team's page: team_month's figures and ranges, team_audit_month's IT-energy bounds and
    embodied CO2e, team_sensitivity_month's tornado rows; nothing computed here."""
    embodied, findings = _embodied(audit)
    meters = [
        meter("accelerator_hours", t["gpu_hours"], t["gpu_hours"], t["gpu_hours"], "derived",
              "billed GPU-hours (sum of usage lines)", []),
        *(_operational(t, lines, audit) if t["it_energy_kwh"] else
          [meter(name, 0.0, 0.0, 0.0, "derived", "no GPU energy in the month", [])
           for name in ("it_energy_kwh", "facility_energy_kwh", "co2e_location_kg")]),
        _market(t, lines, market or {}),
        embodied,
    ]
    # Two tornados, not the disclosures' three: a team's facility energy rests on no assumption that
    # its location-based CO2e does not show (each chart costs about a second of PDF rendering).
    tornados = [tornado_entry(name, central, tornado_rows[name]) for name, central in (
        ("co2e_location_kg", t["co2e_kg"]), ("co2e_embodied_kg", embodied["value"])) if tornado_rows.get(name)]
    ids = [i for m in meters for i in m["assumptions"]]
    zones = sorted({line["zone"] or "" for line in lines} - {""})
    return {"kind": "team", "name": t["team"], "source": f"team footprint {month}", "inputs": {}, "match": None,
            "meters": meters, "checks": [], "flags": [], "findings": findings, "tornados": tornados,
            "publish": what_to_publish(ids, MEASURE), "co2e": [m for m in meters if m["meter"] in CO2E],
            "co2e_chart": co2e_chart(meters),
            "tiers": {"measured": t["it_energy_kwh_measured"], "estimated": t["it_energy_kwh"] - t["it_energy_kwh_measured"],
                      "estimated_low": audit["it_energy_kwh_estimated_low"],
                      "estimated_high": audit["it_energy_kwh_estimated_high"]},
            "zones": zones, "market_claims": [c for z in zones for c in (market or {}).get(z, {}).get("claims", []) if c["applied_kwh"]]}


def _operational(t: dict[str, Any], lines: list[dict], audit: dict[str, Any]) -> list[dict[str, Any]]:
    """IT energy, facility energy and location-based CO2e of a team that used GPUs, with their
    ranges and the coefficients each rests on."""
    # All of it measured (floats summed in another order may differ in the last bits).
    measured = abs(t["it_energy_kwh_measured"] - t["it_energy_kwh"]) <= 1e-9 * max(1.0, abs(t["it_energy_kwh"]))
    return [
        meter("it_energy_kwh", t["it_energy_kwh"], audit["it_energy_kwh_low"], audit["it_energy_kwh_high"],
              "measured" if measured else "estimated",
              "measured by DCGM" if measured else f"{number(t['it_energy_kwh_measured'], 1)} kWh measured by DCGM, the rest "
              "billed GPU-hours x TDP x power fraction" if t["it_energy_kwh_measured"] else
              "billed GPU-hours x TDP x power fraction (no telemetry on these GPUs)", _ids(lines, "it_energy_kwh")),
        meter("facility_energy_kwh", t["facility_energy_kwh"], t["facility_energy_kwh_low"], t["facility_energy_kwh_high"],
              "estimated", "IT energy x PUE of the zone", _ids(lines, "facility_energy_kwh")),
        meter("co2e_location_kg", t["co2e_kg"], t["co2e_kg_low"], t["co2e_kg_high"], "estimated",
              "facility energy x grid intensity of the zone", _ids(lines, "co2e_kg")),
    ]


def _market(t: dict[str, Any], lines: list[dict], zones: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Facility energy x each zone's market-based factor (instruments, supplier factors, residual
    mix: carbon_month, market_basis_month); not available (and why) when a zone the team's energy
    sits in has none: a partial sum would understate it."""
    used = [line for line in lines if line["facility_energy_kwh"]]
    if not used:
        return meter("co2e_market_kg", 0.0, 0.0, 0.0, "derived", "no energy in the month", [])
    in_zones = sorted({line["zone"] or "lines without a zone" for line in used})
    missing = sorted({line["zone"] or "lines without a zone" for line in used if line["co2e_market_kg"] is None})
    if missing or t["co2e_market_kg"] is None:
        why = "; ".join(zones.get(z, {}).get("market_reason") or f"{z}: no market-based factor" for z in missing)
        return meter("co2e_market_kg", None, None, None, "not available", why or "no market-based factor", [])
    claims = [c for z in in_zones for c in zones.get(z, {}).get("claims", []) if c["applied_kwh"]]
    basis = "; ".join(f"{c['zone']}: {_claim_text(c)} on {number(c['applied_kwh'], 1)} kWh" for c in claims)
    ids = sorted({c["coefficient_id"] for c in claims if c["coefficient_id"]} | set(_ids(lines, "facility_energy_kwh")))
    return meter("co2e_market_kg", t["co2e_market_kg"], t["co2e_market_kg_low"], t["co2e_market_kg_high"], "estimated",
                 f"facility energy x each zone's market-based factor ({basis or 'no claim'})", ids)


def _claim_text(c: dict[str, Any]) -> str:
    """One claim with its provenance: what it is, its factor, source and year."""
    what = c["claim"] if c["claim_kind"] != "residual_mix" else "residual mix"
    kind = f" ({c['instrument_type']})" if c.get("instrument_type") else ""
    year = c["year"] if c["year"] is not None else "year not declared"
    return f"{what}{kind} {c['g_per_kwh']:g} g/kWh, {c['source']}, {year}"


def _embodied(audit: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(meter, findings) of the team's billed GPU-hours: team_audit_month's embodied CO2e."""
    if audit["co2e_embodied_kg"] is None:
        return meter("co2e_embodied_kg", 0.0, 0.0, 0.0, "derived", "no GPU-hours in the month", []), []
    unknown = audit["gpu_hours_unknown_model"]
    findings = [f"{number(unknown)} GPU-hours are on resources of unknown GPU model: their embodied CO2e uses "
                "assumptions:gpu_embodied_kgco2e_unknown"] if unknown else []
    return meter("co2e_embodied_kg", audit["co2e_embodied_kg"], audit["co2e_embodied_kg_low"], audit["co2e_embodied_kg_high"],
                 "estimated", audit["embodied_method"], audit["embodied_assumption_ids"].split(ID_SEPARATOR)), findings
