"""Measured beats estimated: a disclosure matched to a host DCGM measured is audited on the
measurement, with the estimate beside it, and a CodeCarbon run is audited on its own measured GPU
energy. Both go through the reconstruct engine as disclosures that report IT energy, in the build
(pipelines.audit_reconstructions), so their facility energy, CO2e and embodied carbon are estimated
as a published disclosure's are.
"""
from __future__ import annotations

from typing import Any, Mapping

import duckdb

from core.sql import rows_as_dicts, table_exists
from core.text import run_name
from pipelines.reconstruct import P_HIGH, P_LOW, coefficients_by_id
from reports.audit_common import CO2E, meter
from reports.audit_match import window_energy_kwh
from reports.labels import coefficient_label
from reports.render import number

MEASURED = "measured"


def as_measured(meters: list[dict[str, Any]], estimate: list[dict[str, Any]], how: str) -> list[dict[str, Any]]:
    """The measured variant's meters, each with the estimate's figure beside it; IT energy is
    'measured' (the engine calls any figure it starts from 'reported')."""
    by_name = {m["meter"]: m for m in estimate}
    out = []
    for m in meters:
        e = by_name.get(m["meter"])
        m = {**m, "estimate": {k: e[k] for k in ("value", "low", "high", "status")} if e else None}
        if m["meter"] == "it_energy_kwh":
            m.update(status=MEASURED, method=how, reported=e["reported"] if e else None)
        out.append(m)
    return out


def miss_finding(estimate: Mapping[str, Any], measured_kwh: float, sensitivity: list[dict], host: str) -> str | None:
    """A finding when the estimate (the engine's meter: its interval bounds, and its test window,
    the Monte Carlo's 5th-95th percentiles) does not hold the measurement: beyond the bounds the
    estimate is wrong; beyond the window only, unusual. Names the assumption that drives the miss
    (the top tornado row) and the value the measurement implies for it."""
    value, low, high = estimate["value"], estimate["bound_low"], estimate["bound_high"]
    if low is None or estimate["low"] <= measured_kwh <= estimate["high"]:
        return None
    above = measured_kwh > estimate["high"]
    if low <= measured_kwh <= high:
        side = (f"within the range but {'above' if above else 'below'} the estimate's test window ({P_LOW:g}th–{P_HIGH:g}th "
                f"percentile, {number(estimate['low'], 1)} to {number(estimate['high'], 1)} kWh): the estimate is unusual")
    else:
        side = "above its upper bound" if above else "below its lower bound"
    text = (f"The estimate of IT energy, {number(value, 1)} kWh (range {number(low, 1)} to {number(high, 1)}), misses the {number(measured_kwh, 1)} kWh "
            f"DCGM measured on host {host}: the measurement lies {side}.")
    if sensitivity:
        top = sensitivity[0]["assumption"]
        c = coefficients_by_id().get(top)
        text += f" The assumption that drives the miss: {coefficient_label(top)}"
        if c and value:
            text += (f" (central {c['value']:g}, range {c['low']:g} to {c['high']:g} {c['unit']}; the measurement implies "
                     f"{c['value'] * measured_kwh / value:.3g})")
        text += "."
    return text


# ---------------------------------------------------------------- CodeCarbon runs


def run_rows(con: duckdb.DuckDBPyConnection, month: str) -> list[dict[str, Any]]:
    """The month's CodeCarbon runs (by their end, UTC) with a GPU energy figure."""
    if not table_exists(con, "run_month"):
        return []
    return rows_as_dicts(con, """
        select * from run_month
        where month = ? and gpu_energy_kwh is not null and gpu_energy_kwh > 0
        order by end_utc, run_id""", [month])


def run_entity(con: duckdb.DuckDBPyConnection, r: dict[str, Any], result: dict[str, Any], match: dict[str, Any]) -> dict[str, Any]:
    meters = []
    for name in ("it_energy_kwh", "facility_energy_kwh", *CO2E):
        m = result["meters"].get(name)
        if m is None:
            meters.append(meter(name, None, None, None, "not available", "the run gives no GPU model to amortise", []))
            continue
        status = MEASURED if name == "it_energy_kwh" else m["status"]
        meters.append(meter(name, m["value"], m["bound_low"], m["bound_high"], status,
                            "GPU energy measured by CodeCarbon" if name == "it_energy_kwh" else m["method"], m["assumptions"]))
    check = None
    if match["status"] == "matched":
        dcgm = window_energy_kwh(con, match["host"], match["namespace"], r["start_utc"], r["end_utc"])
        check = {"dcgm_kwh": dcgm, "codecarbon_kwh": meters[0]["value"]}
    return {"kind": "run", "name": run_name(r), "source": f"CodeCarbon, project {r['project']}", "match": match,
            "window": (r["start_utc"], r["end_utc"]), "gpus": r.get("gpu_count"), "gpu_model": r.get("gpu_model"),
            "meters": meters, "co2e": [m for m in meters if m["meter"] in CO2E], "check": check,
            "other_kwh": (r.get("cpu_energy_kwh") or 0.0) + (r.get("ram_energy_kwh") or 0.0)}
