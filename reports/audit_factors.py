"""Every factor the audit's figures rest on, with its value, unit, range, year, source and notes
(a borrowed region's note included): the factor table after the boundary, and factors.csv.

A factor is a reference row (sources/reference/*.csv, by coefficient id) or a market-based factor
the configuration declares. The year is the row's data year where the file has one (grid
intensity, operators), else the newest year its source names, else the year it was retrieved;
``year_basis`` says which, so no factor is printed without a year and none pretends to one.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable

from reports.audit_labels import label
from sources import reference_data as rd

FACTOR_COLUMNS = ["factor", "coefficient_id", "value", "unit", "low", "high", "year", "year_basis", "source", "notes",
                  "used_by"]
YEAR = re.compile(r"\b(19[5-9]\d|20\d\d)\b")


@lru_cache(maxsize=1)
def reference_factors() -> dict[str, dict[str, Any]]:
    out = {}
    for name in rd.COEFFICIENT_FILES:
        if name == "check_limits":
            continue
        for r in rd.read_rows(name):
            cid = rd.coefficient_id(name, dict(r))
            years = [int(y) for y in YEAR.findall(r.get("source") or "")]
            year, basis = ((r["year"], "data year") if r.get("year") else (str(max(years)), "year of the source")
                           if years else ((r.get("retrieved") or "")[:4], "year retrieved"))
            out[cid] = {"factor": label(cid), "coefficient_id": cid, "value": float(r["value"]), "unit": r.get("unit", ""),
                        "low": float(r["low"]), "high": float(r["high"]), "year": year, "year_basis": basis,
                        "source": r.get("source", ""), "notes": r.get("notes", "")}
    return out


def declared_market(zone: str, g_per_kwh: float) -> dict[str, Any]:
    """A market-based factor the configuration declares for a zone (no source or year to give)."""
    return {"factor": f"market-based factor of {zone}", "coefficient_id": f"config:market:{zone}", "value": g_per_kwh,
            "unit": "gCO2e/kWh", "low": g_per_kwh, "high": g_per_kwh, "year": "", "year_basis": "not stated",
            "source": "declared in the configuration (carbon section), without a source",
            "notes": "a contractual or supplier factor must be declared with its source and year to be signed"}


def factors(entities: Iterable[dict[str, Any]], market: dict[str, float], zones: Iterable[str]) -> list[dict[str, Any]]:
    """The factors every printed figure uses, each once, with the entities that use it."""
    known = reference_factors()
    used: dict[str, list[str]] = {}
    for e in entities:
        for m in e["meters"]:
            for cid in m["assumptions"]:
                if cid in known and e["name"] not in used.setdefault(cid, []):
                    used[cid].append(e["name"])
    rows = [{**known[cid], "used_by": names} for cid, names in used.items()]
    rows += [{**declared_market(z, market[z]), "used_by": ["teams"]} for z in sorted(set(zones)) if z in market]
    order = ("grid_intensity", "config", "operators", "pue", "gpu_specs", "convention_tdp", "assumptions", "embodied")
    return sorted(rows, key=lambda r: (next((i for i, p in enumerate(order) if r["coefficient_id"].startswith(p)), 99),
                                       r["factor"]))
