"""What every part of the footprint audit builds its entities from: a meter row, the CO2e chart,
a tornado section and the "publish or measure this" table.

Disclosures (reports.audit), team footprints (reports.audit_teams), CodeCarbon runs
(reports.audit_measured) and the statement (reports.audit_statement) all import these from here,
so none of them imports another for its helpers and the audit's modules form no cycle.
"""
from __future__ import annotations

import fnmatch
from typing import Any

from core.vocabulary import METER_UNITS
from reports import charts
from reports.labels import coefficient_label, label

CO2E = ("co2e_location_kg", "co2e_market_kg", "co2e_embodied_kg")


def meter(name: str, value: float | None, low: float | None, high: float | None, status: str, method: str,
          assumptions: list[str], reported: float | None = None) -> dict[str, Any]:
    """One row of an entity's meter table (and of audit.csv); `estimate` is the figure a
    measurement replaced, when one did."""
    return {"meter": name, "unit": METER_UNITS[name], "reported": reported, "value": value, "low": low, "high": high,
            "status": status, "method": method, "assumptions": assumptions, "estimate": None}


def what_to_publish(assumption_ids: list[str], table: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    """Group the assumptions an audit used by the published (or, for a team, measured) figure that
    would make each unnecessary; `table` maps coefficient-id patterns to it, first match wins."""
    need: dict[str, list[str]] = {}
    for cid in sorted(set(assumption_ids)):
        words = coefficient_label(cid)
        field = next((text for pattern, text in table if fnmatch.fnmatchcase(cid, pattern)),
                     f"a published value for {words[:1].lower()}{words[1:]}")
        need.setdefault(field, []).append(cid)
    return [{"publish": k, "replaces": v} for k, v in sorted(need.items())]


def tornado_entry(name: str, central: float, rows: list[dict]) -> dict[str, Any]:
    """A tornado section: the one-at-a-time rows and their chart."""
    return {"meter": name, "unit": METER_UNITS[name], "central": central, "rows": rows,
            "chart": charts.tornado_chart_svg([{**r, "assumption": label(r["assumption"], "coefficient")} for r in rows], central,
                                              f"{label(name, 'meter')}, {METER_UNITS[name]}")}


def _or(x: Any, default: Any) -> Any:
    return default if x is None else x


def co2e_chart(meters: list[dict]) -> str:
    shown = [m for m in meters if m["meter"] in CO2E and m["value"] is not None]
    if not any(m["value"] or m["high"] for m in shown):   # nothing to draw (a team without GPU use)
        return ""
    return charts.range_chart_svg([m["meter"].removesuffix("_kg").replace("co2e_", "") for m in shown],
                                  [m["value"] for m in shown], [_or(m["low"], m["value"]) for m in shown],
                                  [_or(m["high"], m["value"]) for m in shown],
                                  [m["reported"] for m in shown], "CO2e, kg")
