"""The audit's page per model: the figures `meterbook report disclosure` files for it (AI Act
Annex XI compute and energy, SCI), each with its range, status and method.

A model trained here (its training jobs in the month's work log, read from job_disclosure_month)
is reported from the measured marts through the very functions that write the forms, so the page
and the form cannot differ; its published disclosure, where there is one, stands beside it. A
model known only from a disclosure (no training job of it in the month) is reported from its
published figures and their reconstruction (audit_reconstructions), ranges included, in the same
rows.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import rows_as_dicts, table_exists
from core.units import H_PER_DAY, KG_PER_T, KWH_PER_MWH
from reports.disclosure import ai_act, job_model, sci, subject

# The disclosure meter each Annex XI row rests on, for a model known from its disclosure.
DISCLOSED = {"gpu_hours": "accelerator_hours", "work_flops": "train_flops", "facility_energy_kwh": "facility_energy_kwh",
             "co2e_kg": "co2e_location_kg", "co2e_market_kg": "co2e_market_kg", "embodied_co2e_kg": "co2e_embodied_kg"}


def model_pages(con: duckdb.DuckDBPyConnection, month: str | None, disclosures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One page per model: each disclosed model (with its own training jobs of the month, if any),
    then each training job of the month no disclosure names. `disclosures` are the audit's
    disclosure entities."""
    jobs = _training_jobs(con, month)
    pages, claimed = [], set()
    for entity in disclosures:
        own = [j for j in jobs if job_model(j, entity["name"])]
        claimed |= set(own)
        if own and month is not None:
            row = subject(con, (month, month), None, entity["name"])
            pages.append(_page(entity["name"], row, "local", f"training jobs {row['jobs']} of the work log, {month}", entity))
        else:
            row = disclosed_row(entity)
            pages.append(_page(entity["name"], row, "disclosed", "known only from its disclosure: no training job of it "
                               + (f"in the {month} work log" if month else "in this audit (no --month)"), entity))
    for job in (j for j in jobs if j not in claimed):
        row = subject(con, (month or "", month or ""), job, None)
        pages.append(_page(job, row, "local", f"training job {job} of the work log, {month}", None))
    return pages


def _training_jobs(con: duckdb.DuckDBPyConnection, month: str | None) -> list[str]:
    if month is None or not table_exists(con, "job_disclosure_month"):
        return []
    return [r["job_id"] for r in rows_as_dicts(
        con, "select distinct job_id from job_disclosure_month where month = ? and workload = 'training' order by job_id",
        [month])]


OUTSIDE_INVENTORY = "none: the publisher's emissions, outside this organisation's inventory"


def disclosed_row(entity: dict[str, Any]) -> dict[str, Any]:
    """A disclosure's figures in job_disclosure_month's columns: each the meter the audit shows
    (reported, or reconstructed with its range), so the forms' functions read it as they read a job."""
    inputs = entity["inputs"]   # published numbers as written ('14.8'): read as numbers here
    meters = {m["meter"]: m for m in entity["meters"]}
    # a published model card discloses its training: the forms file it as training (SCI's R a training run)
    row: dict[str, Any] = {"jobs": entity["name"], "workload": "training", "tokens": _number(inputs.get("tokens")), "requests": None,
                           "gpu_models": inputs.get("accelerator") or "not disclosed", "start_utc": None, "end_utc": None,
                           "wall_clock_h": _number(inputs.get("training_days"), H_PER_DAY),
                           "assumption_ids": sorted({i for m in entity["meters"] for i in m["assumptions"]})}
    for column, name in DISCLOSED.items():
        m = meters.get(name) or {}
        row[column] = m.get("value")
        for end in ("low", "high"):
            row[f"{column}_{end}"] = m.get(end) if m.get(end) is not None else m.get("value")
    energy = meters.get("facility_energy_kwh") or {}
    row["energy_tier"] = energy.get("status") or "not available"
    # each figure's status and how it was reached, as the disclosure's page states them
    row["notes"] = {c: _status_method(meters[n]) for c, n in DISCLOSED.items() if n in meters}
    row["training_days_published"] = _number(inputs.get("training_days"))
    # another organisation's training: in none of this organisation's scopes
    row |= {"ownership": "not disclosed", "electricity_scope": OUTSIDE_INVENTORY, "embodied_scope": OUTSIDE_INVENTORY}
    # SCI's O is the disclosure's location-based CO2e at its own intensity: no grid hours of ours
    # behind it, and its boundary is its publisher's
    row |= {f"co2e_hourly_kg{end}": row[f"co2e_kg{end}"] for end in ("", "_low", "_high")}
    row |= {"intensity_basis": "the disclosure's location-based CO2e over its energy, as published or reconstructed",
            "sci_boundary": {"included": ["what the publisher's disclosure covers"], "excluded": []}}
    return row


def _page(name: str, row: dict[str, Any], kind: str, basis: str, disclosure: dict[str, Any] | None) -> dict[str, Any]:
    known = all(row.get(c) is not None for c in ("facility_energy_kwh", "co2e_kg"))
    form = ai_act(row) if known else None
    # SCI needs all of E x I and M; a disclosure without accelerator-hours has no M
    score = sci(row) if known and row["facility_energy_kwh"] and row.get("embodied_co2e_kg") is not None else None
    reported = {m["meter"]: m["reported"] for m in disclosure["meters"]} if disclosure else {}
    return {"name": name, "kind": kind, "basis": basis, "source": disclosure["source"] if disclosure else None,
            "rows": annex_rows(row, form, reported), "sci": score, "tier": row["energy_tier"]}


def annex_rows(row: dict[str, Any], form: dict[str, Any] | None, reported: dict[str, Any]) -> list[dict[str, Any]]:
    """Annex XI's compute and energy items, in the units the form uses, each with its range and,
    where a disclosure gives one, the published figure beside it."""
    def item(label: str, column: str, scale: float, unit: str, meter: str | None) -> dict[str, Any]:
        value, low, high = (row.get(c) for c in (column, f"{column}_low", f"{column}_high"))
        published = reported.get(meter) if meter else None
        return {"item": label, "unit": unit, "value": _scaled(value, scale), "low": _scaled(low, scale),
                "high": _scaled(high, scale), "published": _scaled(published, scale), "note": notes.get(column, "")}
    notes = row.get("notes") or _local_notes(row, form)
    days = row["wall_clock_h"] / H_PER_DAY if row.get("wall_clock_h") else None
    rows = [{"item": "Training time, wall clock", "unit": "days", "value": days, "low": None, "high": None,
             "published": row.get("training_days_published"), "note": form["Training time"]["band"] if form and days else ""},
            item("Training time, hardware", "gpu_hours", H_PER_DAY, "GPU-days", "accelerator_hours"),
            item("Amount of computation used for training", "work_flops", 1.0, "FLOP", "train_flops"),
            item("Amount of energy used for training", "facility_energy_kwh", KWH_PER_MWH, "MWh", "facility_energy_kwh"),
            item("CO2e, location-based", "co2e_kg", KG_PER_T, "t", "co2e_location_kg"),
            item("CO2e, market-based", "co2e_market_kg", KG_PER_T, "t", "co2e_market_kg"),
            item("CO2e, embodied (SCI's M)", "embodied_co2e_kg", KG_PER_T, "t", "co2e_embodied_kg")]
    return rows


def _local_notes(row: dict[str, Any], form: dict[str, Any] | None) -> dict[str, str]:
    """How a job's figures were reached: the methodology the AI Act form states, and the marts' bases."""
    if form is None:
        return {}
    return {"gpu_hours": f"from the job's GPU-hours on {row['gpu_models']}", "work_flops": form["Measurement methodology (computation)"],
            "facility_energy_kwh": form["Measurement methodology (energy)"],
            "co2e_kg": "facility energy x the location-based grid intensity of where it ran",
            "co2e_market_kg": "facility energy x the market-based factor (GHG Protocol Scope 2 quality criteria)",
            "embodied_co2e_kg": "the GPUs' embodied CO2e amortized over their life, by GPU-hour"}


def _scaled(x: float | None, per: float) -> float | None:
    return None if x is None else x / per


def _status_method(meter: dict[str, Any]) -> str:
    """'derived: accelerator_count x ...'; a reported figure's method says no more than its status."""
    return meter["status"] if meter["method"] in ("", meter["status"]) else f"{meter['status']}: {meter['method']}"


def _number(text: Any, times: float = 1.0) -> float | None:
    return None if text is None else float(text) * times
