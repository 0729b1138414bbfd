"""Footprint-audit report: published disclosures (and a month's team footprints) as reported vs
reconstructed, with ranges, status, tornado charts, consistency findings, and what each
disclosure would have to publish for the audit to need no assumptions.

Disclosures are read from the audit_disclosures mart and their reconstructions from
audit_reconstructions, which the build computes with pipelines.reconstruct (one seeded Monte Carlo,
so every build gives the same figures) from the same input `meterbook reconstruct` builds from the
file: each number with its text as written, so both give the same ranges and findings. The audit
looks each result up by the input it builds (pipelines.audit_reconstructions.input_key). Team
footprints: reports/audit_teams.py.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from core.atomic import replacing_set, write_text
from core.errors import InputError
from core.months import check_month
from core.sql import rows_as_dicts, table_exists
from pipelines.audit_reconstructions import input_key, measured_input, run_input
from pipelines.config import Config
from pipelines.quality import quality_summary
from reports import audit_statement as st
from reports.audit_common import CO2E, co2e_chart, meter, tornado_entry, what_to_publish
from reports.audit_factors import FACTOR_COLUMNS, factors
from reports.audit_jobs import work_benchmark
from reports.audit_match import host_workloads, match_disclosure, match_run
from reports.audit_measured import as_measured, miss_finding, run_entity, run_rows
from reports.audit_models import model_pages
from reports.audit_teams import team_entities
from reports.carbon import carbon_context
from reports.methodology import methodology_context
from reports.provenance import document_date, provenance
from reports.render import csv_text, number, render_pdf
from reports.whatif import whatif_context
from sources.disclosure_format import FIELDS, TEXT_COLUMNS, warehouse_engine_input

METERS = ("accelerator_hours", "it_energy_kwh", "facility_energy_kwh", "co2e_location_kg", "co2e_market_kg",
          "co2e_embodied_kg", "cost_usd", "train_flops", "mfu")
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
    ("energy_scope:*", "energy_scope of the energy the published CO2e was computed from (IT or facility)"),
    ("convention_grid:*", "grid_gco2e_per_kwh: the factor the calculator applied, as it printed it"),
    ("market_instruments:*", "co2e_market_t, or market_gco2e_per_kwh with the contracts behind it"),
)
METER_COLUMNS = ["entity", "kind", "meter", "unit", "reported", "value", "low", "high", "status", "method", "assumptions"]


# Why a CO2e basis has no figure, for a disclosure that reaches none (shown, not left out).
UNAVAILABLE = {
    "co2e_location_kg": "the disclosure gives no energy, accelerator-hours or CO2e to build it from",
    "co2e_market_kg": "the disclosure gives neither co2e_market_t nor market_gco2e_per_kwh (a contractual or "
                      "residual-mix factor, GHG Protocol Scope 2 market-based)",
    "co2e_embodied_kg": "the disclosure gives no accelerator-hours (nor figures to derive them) to amortize the hardware over",
}


def _missing(name: str, row: dict[str, Any]) -> dict[str, Any]:
    if name == "co2e_market_kg" and row.get("market_gco2e_per_kwh") is not None:
        return meter(name, None, None, None, "not available", "no facility energy to apply market_gco2e_per_kwh to", [])
    if name in UNAVAILABLE:
        return meter(name, None, None, None, "not available", UNAVAILABLE[name], [])
    return meter(name, None, None, None, "not computed", "no input reaches it", [])


def disclosure_rows(con: duckdb.DuckDBPyConnection, models: list[str]) -> list[dict[str, Any]]:
    rows = rows_as_dicts(con, "select * from audit_disclosures order by model, file_id, row_number")
    if models:
        wanted = {m.casefold() for m in models}
        known = sorted({r["model"] for r in rows})
        rows = [r for r in rows if r["model"].casefold() in wanted]
        missing = wanted - {r["model"].casefold() for r in rows}
        if missing:
            raise InputError(f"--model {', '.join(sorted(missing))}", "no such disclosure in the warehouse",
                             f"models: {', '.join(known) or 'none'}", "Ingest the disclosure YAML or model card first")
    return rows


def _meters(row: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
    # The MFU check's 'reported' is implied by the published hours and FLOPs, not published itself.
    checks = {c["meter"]: c for c in result["checks"] if c["meter"] != "mfu"}
    meters = []
    for name in METERS:
        m = result["meters"].get(name)
        reported = m["value"] if m and m["status"] == "reported" else (checks[name]["reported"] if name in checks else None)
        meters.append(meter(name, m["value"], m["bound_low"], m["bound_high"], m["status"], m["method"], m["assumptions"], reported)
                      if m else {**_missing(name, row), "reported": reported})
    return meters


def disclosure_entity(row: dict[str, Any], result: dict[str, Any], match: dict[str, Any] | None = None,
                      measured: dict[str, Any] | None = None) -> dict[str, Any]:
    """A disclosure's page; with ``measured`` (the same disclosure on the IT energy DCGM measured on
    its matched host) the audit uses the measurement, the estimate beside each meter."""
    meters = _meters(row, result)
    findings = list(row.get("findings") or []) + _unwritten(row)
    if measured is not None and match is not None:   # a measured variant exists only for a matched host
        estimate = meters
        how = (f"measured by DCGM on host {match['host']} ({number(match['gpu_hours'])} GPU-hours of the {match['namespace']} "
               f"workload, team {match['team']})")
        meters = as_measured(_meters(row, measured), estimate, how)
        miss = miss_finding(result["meters"]["it_energy_kwh"], match["it_energy_kwh"], result["sensitivity"].get("it_energy_kwh", []), match["host"])
        findings += [miss] if miss else []
    ids = [i for m in meters if m["status"] not in ("reported", "measured") for i in m["assumptions"]]
    used = measured or result   # the tornados of the figures the audit uses
    tornados = [tornado_entry(name, used["meters"][name]["value"], used["sensitivity"][name])
                for name in TORNADO_METERS if used["sensitivity"].get(name) and name in used["meters"]]
    # Published numbers as written ('1.1e9', not 1.100e+09): the printed digits are what the ranges rest on.
    shown = {**{k: row.get(k) for k in FIELDS}, **{k: row.get(c) for k, c in TEXT_COLUMNS.items() if row.get(c)}}
    return {
        "kind": "disclosure", "name": row["model"], "source": row["source"],
        "inputs": {k: v for k, v in shown.items() if v is not None and k not in ("model", "source")},
        "meters": meters, "checks": result["checks"], "flags": result.get("flags", []), "match": match,
        "findings": findings, "tornados": tornados, "publish": what_to_publish(ids, PUBLISH),
        "co2e": [m for m in meters if m["meter"] in CO2E],
        "co2e_chart": co2e_chart(meters),
    }


def _unwritten(row: dict[str, Any]) -> list[str]:
    """A row ingested before the warehouse kept numbers as written: say which figures lost their
    printed precision (read as exact to their last stored digit, so their ranges may be too narrow)."""
    lost = [k for k, c in TEXT_COLUMNS.items() if row.get(k) is not None and row.get(c) is None]
    if not lost:
        return []
    return [f"{', '.join(lost)}: ingested before meterbook kept numbers as written, so their printed precision "
            "is unknown and they are read as exact to the last digit; ingest the file into a new warehouse "
            "for the ranges `meterbook reconstruct` gives"]


def reconstructions(con: duckdb.DuckDBPyConnection, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The build's result for each engine input (audit_reconstructions), in order; a stored
    disclosure the engine cannot read is one Error: line, as the build recorded it."""
    keys = [input_key(d) for d in inputs]
    found = {r["input_key"]: r for r in rows_as_dicts(
        con, "select * from audit_reconstructions where input_key in (select unnest(?))", [keys])} if keys else {}
    out = []
    for d, key in zip(inputs, keys):
        r = found.get(key)
        if r is None:
            raise InputError("audit_reconstructions", f"no reconstruction of {d.get('model')}", "",
                             "Run `meterbook build` on this warehouse first")
        if r["error"]:
            e = json.loads(r["error"])
            raise InputError("disclosures table", e["what"], e["where"], e["fix"])
        out.append(json.loads(r["result_json"]))
    return out


# Files the audit reads whatever the month: published disclosures are not dated by one
DISCLOSURE_KINDS = ("disclosure", "hf-model-card")


def build_audit_context(con: duckdb.DuckDBPyConnection, config: Config, models: list[str],
                        month: str | None) -> dict[str, Any]:
    if month is not None:
        check_month(month)
    rows = disclosure_rows(con, models) if table_exists(con, "audit_disclosures") else []
    workloads = host_workloads(con, month) if month is not None else []
    matches = [match_disclosure(r, workloads) if month is not None else None for r in rows]
    dicts = [warehouse_engine_input(r) for r in rows]
    measured = [measured_input(d, m) for d, m in zip(dicts, matches)]
    runs = run_rows(con, month) if month is not None else []
    run_matches = [match_run(r, workloads) for r in runs]
    run_inputs = [run_input(r) for r in runs]
    results = reconstructions(con, dicts + [m for m in measured if m] + run_inputs)
    it = iter(results[len(dicts):])
    measured_results = [next(it) if m else None for m in measured]
    run_results = list(it)
    entities = [disclosure_entity(r, res, match, mres)
                for r, res, match, mres in zip(rows, results, matches, measured_results)]
    if month is not None:
        teams = team_entities(con, month)
        if config.host_overhead == "included":
            teams.append(st.host_overhead_entity(teams))
        entities = teams + entities + [run_entity(con, r, res, m) for r, res, m in zip(runs, run_results, run_matches)]
    if not entities:
        raise InputError("report audit", "nothing to audit", "no disclosures in the warehouse" + ("" if month else " and no --month"),
                         "Ingest a disclosure YAML or model card, or pass --month for the month's team footprints")
    teams = [e for e in entities if e["kind"] in ("team", "model")]
    split = st.scope_lines(rows_as_dicts(con, "select * from scope_month where month = ? order by team, ownership", [month]),
                           st.host_overhead_factor(config.host_overhead == "included")) if month else []
    lines = st.rows(entities)
    factor_rows = factors(entities)
    return {"month": month, "models": models, "created": document_date(month), "entities": entities,
            "pages": [e for e in entities if e["kind"] in ("team", "disclosure")], "runs": [e for e in entities if e["kind"] == "run"],
            "statement": {"totals": st.totals(teams, split) if teams else [], "scopes": split, "scope_rule": st.SCOPE_RULE,
                          "rows": lines, "reasons": st.reasons(lines),
                          "boundary": st.boundary(month, config, teams, config.host_overhead == "included"), "ranges": st.range_note()},
            # published models as their disclosures alone give them (a matched one's own job is beside it)
            "work_benchmark": work_benchmark(con, month, rows, results),
            # a page per model: what its disclosure forms file, measured here or as published
            "model_pages": model_pages(con, month, [e for e in entities if e["kind"] == "disclosure"]),
            "quality": quality_summary(con, month, DISCLOSURE_KINDS), "methodology": methodology_context(con),
            "provenance": provenance(con, month, DISCLOSURE_KINDS, config), "factors": factor_rows,
            # a month's CO2e three ways and its what-if replay (partials carbon_basis, whatif)
            "carbon": carbon_context(con, month) if month else None, "whatif": whatif_context(con, month) if month else None}


def meter_rows(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"entity": e["name"], "kind": e["kind"], **m, "assumptions": ";".join(m["assumptions"])}
            for e in ctx["entities"] for m in e["meters"]]


def write_audit(con: duckdb.DuckDBPyConnection, config: Config, models: list[str], month: str | None,
                out: Path) -> list[Path]:
    ctx = build_audit_context(con, config, models, month)
    rows = meter_rows(ctx)
    with replacing_set(out, "audit", ("audit.pdf", "audit.csv")) as stage:
        _write_audit_files(ctx, rows, month, models, stage)
    return [out / "audit.pdf", out / "audit.csv"]


def _write_audit_files(ctx: dict[str, Any], rows: list[dict[str, Any]], month: str | None, models: list[str],
                       out: Path) -> None:
    write_text(out / "audit.csv", csv_text(rows, METER_COLUMNS))
    assumptions = json.dumps([{"entity": e["name"], "kind": e["kind"],
                               "assumptions": sorted({i for m in e["meters"] for i in m["assumptions"]}),
                               "sensitivity": {t["meter"]: t["rows"] for t in e.get("tornados", [])}} for e in ctx["entities"]],
                             indent=2)
    render_pdf("audit.html", ctx, out / "audit.pdf", {
        "audit.csv": (csv_text(rows, METER_COLUMNS), "Every meter of every entity: reported, reconstructed, low, high, status"),
        "assumptions.json": (assumptions, "Assumption ids per entity and the one-at-a-time sensitivity behind the tornado charts"),
        "provenance.json": (json.dumps({**ctx["provenance"], "month": month, "models": models}, indent=2),
                            "Warehouse hash, assumptions version, meterbook version"),
        "factors.csv": (csv_text([{**f, "used_by": "; ".join(f["used_by"])} for f in ctx["factors"]], FACTOR_COLUMNS),
                        "Every factor the figures rest on: value, unit, low, high, year and its basis, source, notes"),
        "statement.json": (json.dumps(st.statement_data(ctx), indent=2, default=str),
                           "The statement as data: totals with ranges, the rows that add up, the boundary, the range method"),
    })
