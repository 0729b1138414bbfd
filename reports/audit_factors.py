"""Every factor the audit's figures rest on, with its value, unit, range, year, source and notes
(a borrowed region's note included): the factor table after the boundary, and factors.csv.

A factor is a reference row (sources/reference/*.csv, by coefficient id) or a contractual
instrument or supplier factor a market-based figure claims (market_basis_month), with the source
and year it was declared with. The year is the row's data year where the file has one (grid
intensity, operators), else the newest year its source names, else the year it was retrieved;
``year_basis`` says which, so no factor is printed without a year and none pretends to one.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable

from reports.labels import coefficient_label, plain
from sources import reference_data as rd

FACTOR_COLUMNS = ["factor", "coefficient_id", "value", "unit", "low", "high", "year", "year_basis", "source", "notes",
                  "used_by"]
YEAR = re.compile(r"\b(19[5-9]\d|20\d\d)\b")
def printed_source(source: str) -> str:
    """A source as the factor table prints it: cited files by name, identifiers in words (plain)."""
    return plain(source)


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
            out[cid] = {"factor": coefficient_label(cid), "coefficient_id": cid, "value": float(r["value"]), "unit": r.get("unit", ""),
                        "low": float(r["low"]), "high": float(r["high"]), "year": year, "year_basis": basis,
                        "source": r.get("source", ""), "notes": r.get("notes", "")}
    return out


CLAIM_KINDS = {"instrument": "contractual instrument", "supplier": "supplier factor"}


def claimed_factor(c: dict[str, Any]) -> dict[str, Any]:
    """A contractual instrument or supplier factor a month's market-based CO2e claims: its figure is
    the contract's (no range), its year and source as declared; one declared without them is
    printed so, and flagged."""
    declared = c["year"] is not None
    return {"factor": f"{CLAIM_KINDS[c['claim_kind']]} {c['claim']}" + (f" ({c['instrument_type']})" if c.get("instrument_type") else "")
                      + f", {c['zone']}",
            "coefficient_id": f"market:{c['claim_kind']}:{c['claim']}:{c['zone']}", "value": c["g_per_kwh"],
            "unit": "gCO2e/kWh", "low": c["g_per_kwh"], "high": c["g_per_kwh"], "year": str(c["year"]) if declared else "",
            "year_basis": "year declared" if declared else "not stated", "source": c["source"] or "not stated",
            "notes": "" if declared else "declared without a year: declare it as a supplier factor with its source and "
                                         "year for a figure that can be signed"}


def factors(entities: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The factors every printed figure uses, each once, with the entities that use it."""
    known = reference_factors()
    used: dict[str, list[str]] = {}
    for e in entities:
        for m in e["meters"]:
            for cid in m["assumptions"]:
                if cid in known and e["name"] not in used.setdefault(cid, []):
                    used[cid].append(e["name"])
    claimed: dict[str, dict[str, Any]] = {}
    for e in entities:
        for c in e.get("market_claims", []):
            if c["claim_kind"] in CLAIM_KINDS:
                f = claimed_factor(c)
                row = claimed.setdefault(f["coefficient_id"], {**f, "used_by": []})
                row["used_by"].append(e["name"])
    rows = [{**known[cid], "used_by": names} for cid, names in used.items()] + list(claimed.values())
    rows = [{**r, "source_text": printed_source(r["source"])} for r in rows]
    order = ("grid_intensity", "market", "operators", "pue", "gpu_specs", "convention_tdp", "assumptions", "embodied")
    return sorted(rows, key=lambda r: (next((i for i, p in enumerate(order) if r["coefficient_id"].startswith(p)), 99),
                                       r["factor"]))
