"""The what-if replay of a month (`meterbook whatif`, and the audit's what-if section): the
whatif_month mart summed per lever and scenario, with its subjects. Reads the mart only; sums of
bounds are bounds (each end added up), not percentiles."""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import rows_as_dicts, table_exists
from reports.render import signed

METERS = ("cost_usd_delta", "energy_kwh_delta", "co2e_kg_delta")
SHOWN = 5    # scenarios per lever in a report (the region lever's cleanest); the CLI prints all
LEVER_ORDER = ("region", "shift", "utilization", "spot", "scaling")
LEVER_TEXT = {
    "region": "run the month's measured GPU-hours in another region (its PUE, its grid hour by hour, its price)",
    "shift": "deferrable jobs in the cleanest hours of their window (energy unchanged)",
    "utilization": "under-used workloads at the target utilization (fewer GPU-hours, less idle power)",
    "spot": "a share of on-demand GPU spend on Spot (discount less work redone after interruptions)",
    "scaling": "job families at their cost-optimal GPU count K* (fitted scaling curve)",
}


def whatif_context(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, Any]:
    """{'month', 'levers': [{lever, text, scenarios: [{scenario, subjects, baseline_*, deltas with
    _low/_high, rows}]}]}; levers with nothing to replay are listed with no scenario."""
    if not table_exists(con, "whatif_month_reporting"):
        return {"month": month, "levers": []}
    # cost in the reporting currency (whatif_month_reporting), under the names the tables print
    rows = rows_as_dicts(con, """select * exclude (month)
                                     replace (baseline_cost_reporting as baseline_cost_usd, cost_delta_reporting as cost_usd_delta,
                                              cost_delta_low_reporting as cost_usd_delta_low,
                                              cost_delta_high_reporting as cost_usd_delta_high)
                                 from whatif_month_reporting where month = ?
                                 order by lever, scenario, co2e_kg_delta, subject""", [month])
    levers = []
    for lever in LEVER_ORDER:
        mine = [r for r in rows if r["lever"] == lever]
        scenarios = []
        for name in sorted({r["scenario"] for r in mine}):
            subs = [r for r in mine if r["scenario"] == name]
            s = {"scenario": name, "subjects": len(subs), "rows": subs}
            for col in ("baseline_cost_usd", "baseline_energy_kwh", "baseline_co2e_kg"):
                s[col] = sum(r[col] or 0 for r in subs)
            for m in METERS:
                for end in ("", "_low", "_high"):
                    s[m + end] = sum(r[m + end] or 0 for r in subs)
            scenarios.append(s)
        # the region lever lists its targets cleanest first
        scenarios.sort(key=lambda s: (s["co2e_kg_delta"], s["scenario"]) if lever == "region" else (s["scenario"],))
        levers.append({"lever": lever, "text": LEVER_TEXT[lever], "scenarios": scenarios, "shown": scenarios[:SHOWN]})
    return {"month": month, "levers": levers}


def _triple(s: dict[str, Any], meter: str, places: int = 1) -> str:
    return f"{signed(s[meter], places)} [{signed(s[meter + '_low'], places)}, {signed(s[meter + '_high'], places)}]"


def format_text(ctx: dict[str, Any], detail: bool = False) -> str:
    """The terminal table `meterbook whatif` prints."""
    out = [f"What-if replay of {ctx['month']}: deltas against the month as measured (negative = saving),",
           "bounds in brackets; cost in the reporting currency, energy at the facility, CO2e location-based hour by hour.",
           ""]
    head = f"{'Lever':<12} {'Scenario':<22} {'Subjects':>8}  {'Cost':<34} {'Energy kWh':<28} {'CO2e kg':<28}"
    out += [head, "-" * len(head)]
    for lever in ctx["levers"]:
        if not lever["scenarios"]:
            out.append(f"{lever['lever']:<12} {'(nothing to replay)':<22}")
        for s in lever["scenarios"]:
            out.append(f"{lever['lever']:<12} {s['scenario']:<22} {s['subjects']:>8}  {_triple(s, 'cost_usd_delta', 2):<34} "
                       f"{_triple(s, 'energy_kwh_delta'):<28} {_triple(s, 'co2e_kg_delta', 2):<28}")
            if detail:
                out += [f"{'':<14}{r['subject']}: {r['detail']}" for r in s["rows"]]
    out += ["", *(f"{lv['lever']}: {lv['text']}" for lv in ctx["levers"])]
    return "\n".join(out)
