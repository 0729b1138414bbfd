"""Footprint-audit report: published disclosures (and a month's team footprints) as reported vs
reconstructed, with ranges, status, tornado charts, consistency findings, and what each
disclosure would have to publish for the audit to need no assumptions.

Disclosures are read from the warehouse's `disclosures` table and reconstructed with
pipelines.reconstruct (one shared, seeded Monte Carlo batch, so a re-render gives the same figures).
"""
from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import duckdb

from pipelines.config import Config
from pipelines.errors import InputError
from pipelines.quality import quality_summary, rows_as_dicts
from pipelines.reconstruct import METER_UNITS, DisclosureError, reconstruct_many
from reports import charts
from reports.chargeback import _check_month, table_exists
from reports.methodology import methodology_context
from reports.provenance import document_date, provenance
from reports.render import csv_text, render_pdf
from sources.disclosure_format import FIELDS

METERS = ("accelerator_hours", "it_energy_kwh", "facility_energy_kwh", "co2e_location_kg", "co2e_market_kg",
          "co2e_embodied_kg", "cost_usd", "train_flops", "mfu")
CO2E = ("co2e_location_kg", "co2e_market_kg", "co2e_embodied_kg")
TORNADO_METERS = ("co2e_location_kg", "facility_energy_kwh", "co2e_embodied_kg")
# Which published figure would replace an assumption, by coefficient-id pattern (first match wins).
# Embodied carbon and the FLOP convention have no field in the disclosure format yet.
PUBLISH = (
    ("assumptions:gpu_power_fraction_of_tdp", "power_w with power_basis: measured (mean board power per accelerator), or energy_mwh with energy_scope"),
    ("gpu_specs:*:tdp_w", "power_w with power_basis: measured, instead of the datasheet TDP"),
    ("gpu_specs:*:peak_flops*", "precision, and accelerator_hours so MFU follows from reported figures"),
    ("assumptions:pue_unknown", "pue: the facility's PUE over the training period"),
    ("pue:*", "pue: the facility's PUE over the training period (here the provider's published average)"),
    ("assumptions:grid_intensity*", "location (country, US state or cloud region) and grid_gco2e_per_kwh"),
    ("grid_intensity:*", "grid_gco2e_per_kwh: the location-based factor used"),
    ("assumptions:mfu_typical", "accelerator_hours (or training_days and accelerator_count)"),
    ("assumptions:train_flops_per_param_token", "the training FLOP count (not yet a field of the disclosure format)"),
    ("assumptions:hardware_lifetime_years", "embodied CO2e with its amortization life (not yet a field of the disclosure format)"),
    ("assumptions:accelerators_per_server", "embodied CO2e per accelerator including its host share (not yet a field)"),
    ("embodied:*", "embodied CO2e of the accelerators and servers (not yet a field of the disclosure format)"),
)
METER_COLUMNS = ["entity", "kind", "meter", "unit", "reported", "value", "low", "high", "status", "method", "assumptions"]


def what_to_publish(assumption_ids: list[str]) -> list[dict[str, Any]]:
    """Group the assumptions an audit used by the published figure that would make each unnecessary."""
    need: dict[str, list[str]] = {}
    for cid in sorted(set(assumption_ids)):
        field = next((text for pattern, text in PUBLISH if fnmatch.fnmatchcase(cid, pattern)), f"a published value for {cid}")
        need.setdefault(field, []).append(cid)
    return [{"publish": k, "replaces": v} for k, v in sorted(need.items())]


def disclosure_rows(con: duckdb.DuckDBPyConnection, models: list[str]) -> list[dict[str, Any]]:
    rows = rows_as_dicts(con, "select * from disclosures order by model, file_id, row_number")
    if models:
        wanted = {m.casefold() for m in models}
        rows = [r for r in rows if r["model"].casefold() in wanted]
        missing = wanted - {r["model"].casefold() for r in rows}
        if missing:
            known = sorted({r["model"] for r in rows_as_dicts(con, "select distinct model from disclosures")})
            raise InputError(f"--model {', '.join(sorted(missing))}", "no such disclosure in the warehouse",
                             f"models: {', '.join(known) or 'none'}", "Ingest the disclosure YAML or model card first")
    return rows


def disclosure_entity(row: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    checks = {c["meter"]: c for c in result["checks"]}
    meters = []
    for name in METERS:
        m = result["meters"].get(name)
        reported = m["value"] if m and m["status"] == "reported" else (checks[name]["reported"] if name in checks else None)
        meters.append({"meter": name, "unit": METER_UNITS[name], "reported": reported,
                       **({k: m[k] for k in ("value", "low", "high", "status", "method", "assumptions")} if m else
                          {"value": None, "low": None, "high": None, "status": "not computed", "method": "no input reaches it",
                           "assumptions": []})})
    ids = [i for m in meters if m["status"] != "reported" for i in m["assumptions"]]
    tornados = []
    for name in TORNADO_METERS:
        rows = result["sensitivity"].get(name) or []
        m = result["meters"].get(name)
        if rows and m:
            tornados.append({"meter": name, "unit": METER_UNITS[name], "central": m["value"], "rows": rows,
                             "chart": charts.tornado_chart_svg(rows, m["value"], f"{name}, {METER_UNITS[name]}")})
    return {
        "kind": "disclosure", "name": row["model"], "source": row["source"],
        "inputs": {k: row.get(k) for k in FIELDS if row.get(k) is not None and k not in ("model", "source")},
        "meters": meters, "checks": result["checks"], "flags": result.get("flags", []),
        "findings": list(row.get("findings") or []), "tornados": tornados, "publish": what_to_publish(ids),
        "co2e": [m for m in meters if m["meter"] in CO2E],
        "co2e_chart": _co2e_chart(meters),
    }


def _or(x: Any, default: Any) -> Any:
    return default if x is None else x


def _co2e_chart(meters: list[dict]) -> str:
    shown = [m for m in meters if m["meter"] in CO2E and m["value"] is not None]
    if not shown:
        return ""
    return charts.range_chart_svg([m["meter"].removesuffix("_kg").replace("co2e_", "") for m in shown],
                                  [m["value"] for m in shown], [_or(m["low"], m["value"]) for m in shown],
                                  [_or(m["high"], m["value"]) for m in shown],
                                  [m["reported"] for m in shown], "CO2e, kg")


def team_entities(con: duckdb.DuckDBPyConnection, month: str) -> list[dict[str, Any]]:
    """A month's team footprints from team_month: energy is derived where telemetry measured it and
    estimated for the rest; CO2e always rests on grid intensity and PUE. Market-based and embodied
    CO2e are not computed for teams yet (no contractual factor or hardware inventory in the warehouse)."""
    out = []
    for t in rows_as_dicts(con, "select * from team_month where month = ? order by co2e_kg desc, team", [month]):
        ids = list(t["assumption_ids"] or [])
        # All of it measured (floats summed in another order may differ in the last bits).
        measured = abs(t["it_energy_kwh_measured"] - t["it_energy_kwh"]) <= 1e-9 * max(1.0, abs(t["it_energy_kwh"]))
        energy_status = "derived" if measured else "estimated"
        meters = [
            {"meter": "accelerator_hours", "unit": "h", "reported": None, "value": t["gpu_hours"], "low": t["gpu_hours"],
             "high": t["gpu_hours"], "status": "derived", "method": "billed GPU-hours (sum of usage lines)", "assumptions": []},
            {"meter": "it_energy_kwh", "unit": "kWh", "reported": None, "value": t["it_energy_kwh"], "low": None, "high": None,
             "status": energy_status, "method": "measured by DCGM" if measured else
             f"{t['it_energy_kwh_measured']:,.1f} kWh measured by DCGM, the rest billed GPU-hours x TDP x power fraction",
             "assumptions": [] if measured else [i for i in ids if not i.startswith(("pue:", "grid_intensity:"))]},
            {"meter": "facility_energy_kwh", "unit": "kWh", "reported": None, "value": t["facility_energy_kwh"],
             "low": t["facility_energy_kwh_low"], "high": t["facility_energy_kwh_high"], "status": "estimated",
             "method": "IT energy x PUE of the zone", "assumptions": [i for i in ids if not i.startswith("grid_intensity:")]},
            {"meter": "co2e_location_kg", "unit": "kg", "reported": None, "value": t["co2e_kg"], "low": t["co2e_kg_low"],
             "high": t["co2e_kg_high"], "status": "estimated", "method": "facility energy x grid intensity of the zone",
             "assumptions": ids},
        ] + [_market(t, ids)] + [
            {"meter": "co2e_embodied_kg", "unit": "kg", "reported": None, "value": None, "low": None, "high": None,
             "status": "not computed", "method": "needs a hardware inventory (embodied carbon per GPU and server)",
             "assumptions": []}]
        out.append({"kind": "team", "name": t["team"], "source": f"team_month {month}", "inputs": {},
                    "meters": meters, "checks": [], "flags": [], "findings": [], "tornados": [],
                    "publish": what_to_publish(ids),
                    "co2e": [m for m in meters if m["meter"] in CO2E], "co2e_chart": _co2e_chart(meters)})
    return out


def _market(t: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """Market-based CO2e when team_month carries it (the allocation engine adds co2e_market_kg)."""
    value = t.get("co2e_market_kg")
    if value is None:
        return {"meter": "co2e_market_kg", "unit": "kg", "reported": None, "value": None, "low": None, "high": None,
                "status": "not computed", "method": "needs a contractual (market-based) emission factor", "assumptions": []}
    return {"meter": "co2e_market_kg", "unit": "kg", "reported": None, "value": value, "low": None, "high": None,
            "status": "estimated", "method": "facility energy x market-based factor (allocation engine)", "assumptions": ids}


def build_audit_context(con: duckdb.DuckDBPyConnection, config: Config, models: list[str],
                        month: str | None) -> dict[str, Any]:
    if month is not None:
        _check_month(month)
        from pipelines.stages import run_stages
        run_stages(con, config)
    rows = disclosure_rows(con, models) if table_exists(con, "disclosures") else []
    dicts = [{k: r[k] for k in FIELDS if r.get(k) is not None} for r in rows]
    try:
        results = reconstruct_many(dicts) if dicts else []
    except DisclosureError as exc:   # a stored disclosure the engine cannot read: one Error: line, not a traceback
        raise InputError("disclosures table", exc.what, exc.where, exc.fix) from exc
    entities = [disclosure_entity(r, res) for r, res in zip(rows, results)]
    if month is not None:
        entities += team_entities(con, month)
    if not entities:
        raise InputError("report audit", "nothing to audit", "no disclosures in the warehouse" + ("" if month else " and no --month"),
                         "Ingest a disclosure YAML or model card, or pass --month for the month's team footprints")
    return {"month": month, "models": models, "created": document_date(month), "entities": entities,
            "quality": quality_summary(con), "methodology": methodology_context(con), "provenance": provenance(con)}


def meter_rows(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"entity": e["name"], "kind": e["kind"], **m, "assumptions": ";".join(m["assumptions"])}
            for e in ctx["entities"] for m in e["meters"]]


def write_audit(con: duckdb.DuckDBPyConnection, config: Config, models: list[str], month: str | None,
                out: Path) -> list[Path]:
    ctx = build_audit_context(con, config, models, month)
    rows = meter_rows(ctx)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "audit.csv"
    csv_path.write_text(csv_text(rows, METER_COLUMNS), encoding="utf-8", newline="")
    assumptions = json.dumps([{"entity": e["name"], "kind": e["kind"],
                               "assumptions": sorted({i for m in e["meters"] for i in m["assumptions"]}),
                               "sensitivity": {t["meter"]: t["rows"] for t in e["tornados"]}} for e in ctx["entities"]],
                             indent=2)
    pdf = render_pdf("audit.html", ctx, out / "audit.pdf", {
        "audit.csv": (csv_text(rows, METER_COLUMNS), "Every meter of every entity: reported, reconstructed, low, high, status"),
        "assumptions.json": (assumptions, "Assumption ids per entity and the one-at-a-time sensitivity behind the tornado charts"),
        "provenance.json": (json.dumps({**ctx["provenance"], "month": month, "models": models}, indent=2),
                            "Warehouse hash, assumptions version, meterbook version"),
    })
    return [pdf, csv_path]
