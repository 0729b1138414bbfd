"""The methodology appendix, generated from the reference files, never typed by hand.

`methodology_context` reads sources/reference/*.csv (or the ref_* tables a warehouse loaded from
them) and the "What it holds" line of each file's section in sources/reference/README.md, and
returns what templates/partials/methodology.html prints: per file, what it is, its row count and
the sources it cites; per assumption, value, unit, range, source and reasoning. Values are kept
as the CSV text so the appendix prints exactly the figure the data holds.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

import duckdb

from sources.reference_data import CATALOG_FILES, COEFFICIENT_FILES, REFERENCE_DIR, columns_of, read_rows


def reference_names() -> list[str]:
    """Every CSV in sources/reference: the coefficient files, the catalogs, then any other (check limits)."""
    known = list(COEFFICIENT_FILES + CATALOG_FILES)
    others = sorted(p.stem for p in REFERENCE_DIR.glob("*.csv") if p.stem not in known)
    return [n for n in known if (REFERENCE_DIR / f"{n}.csv").exists()] + others


def reference_rows(con: duckdb.DuckDBPyConnection | None, name: str) -> list[dict[str, str]]:
    """Rows of one reference file as text: from the warehouse's ref_<name> when it has it, else the CSV."""
    if con is not None and name in COEFFICIENT_FILES + CATALOG_FILES:
        try:
            cols = columns_of(name)
            rel = con.execute(f"select {', '.join(f'cast({c} as varchar)' for c in cols)} from ref_{name}")
            return [dict(zip(cols, ("" if v is None else _text(v) for v in row))) for row in rel.fetchall()]
        except duckdb.CatalogException:
            pass   # a warehouse opened read-only before any ingest has no ref_* tables yet
    return [dict(r) for r in read_rows(name)]


def _text(v: str) -> str:
    # DOUBLE -> VARCHAR prints 1.0 for a CSV's 1; drop that ".0" so the figure reads as in the file.
    return v[:-2] if re.fullmatch(r"-?\d+\.0", v) else v


def readme_summaries() -> dict[str, str]:
    """file name -> the 'What it holds.' sentence(s) of its README section."""
    text = (REFERENCE_DIR / "README.md").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for m in re.finditer(r"^## (\w+)\.csv\s*\n+\*\*What it holds\.\*\*\s*(.+?)(?:\n\s*\n)", text, re.M | re.S):
        out[m.group(1)] = " ".join(m.group(2).split())
    return out


def methodology_context(con: duckdb.DuckDBPyConnection | None = None) -> dict[str, Any]:
    """{'files', 'assumptions', 'limits'} for the methodology partial (pure apart from reading files)."""
    summaries = readme_summaries()
    files = []
    for name in reference_names():
        rows = reference_rows(con, name)
        cited = Counter(r["source"] for r in rows if r.get("source"))
        files.append({
            "name": name,
            "file": f"sources/reference/{name}.csv",
            "kind": ("coefficients" if name in COEFFICIENT_FILES else "catalog" if name in CATALOG_FILES
                     else "check limits" if name == "check_limits" else "reference"),
            "what": summaries.get(name, ""),
            "rows": len(rows),
            "retrieved": sorted({r["retrieved"] for r in rows if r.get("retrieved")}),
            "sources": [{"source": s, "rows": n} for s, n in sorted(cited.items(), key=lambda kv: (-kv[1], kv[0]))],
        })
    assumptions = [{
        "id": r["assumption_id"],
        "coefficient_id": f"assumptions:{r['assumption_id']}",
        "value": r["value"], "unit": r["unit"], "low": r["low"], "high": r["high"],
        "source": r["source"], "retrieved": r["retrieved"], "reasoning": r["notes"],
    } for r in reference_rows(con, "assumptions")]
    # Check limits flag implausible values (they are not coefficients); printed when the file exists.
    limits = [{
        "id": r["limit_id"], "value": r["value"], "unit": r["unit"], "source": r["source"],
        "retrieved": r["retrieved"], "reasoning": r["notes"],
    } for r in (reference_rows(con, "check_limits") if "check_limits" in reference_names() else [])]
    return {"files": files, "assumptions": assumptions, "limits": limits}
