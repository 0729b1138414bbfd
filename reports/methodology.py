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

from sources.reference_data import CATALOG_FILES, COEFFICIENT_FILES, REFERENCE_DIR, coefficient_id, columns_of, read_rows


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


# A sentence that points into the code (a module, a test, a function in backticks) is for
# developers: the methodology, read by auditors, leaves it out.
CODE_REFERENCE = re.compile(r"`|\b(?:pipelines|reports|sources|schemas|core|templates|tests)/[\w/.-]+\.\w+")


def readme_summaries() -> dict[str, str]:
    """file name -> the 'What it holds.' sentence(s) of its README section, less those that
    point into the code."""
    text = (REFERENCE_DIR / "README.md").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for m in re.finditer(r"^## (\w+)\.csv\s*\n+\*\*What it holds\.\*\*\s*(.+?)(?:\n\s*\n)", text, re.M | re.S):
        sentences = re.split(r"(?<=[.;])\s+(?=[A-Z(])", " ".join(m.group(2).split()))
        out[m.group(1)] = " ".join(x for x in sentences if not CODE_REFERENCE.search(x))
    return out


def methodology_context(con: duckdb.DuckDBPyConnection | None = None) -> dict[str, Any]:
    """{'files', 'assumptions', 'limits', 'peers'} for the methodology partial (pure apart from reading files)."""
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
    return {"files": files, "assumptions": assumptions, "limits": limits, "peers": peer_comparison(con)}


# ------------------------------------------------------------------ peer cross-check (issue 23)

PEER_VALUES = "peer_values"
# What the cross-check covers: every coefficient row except datasheet memory sizes, the check
# limits (thresholds for flagging input, not estimates) and capital costs (prices, which no peer
# tool publishes).
OUT_OF_SCOPE = {"check_limits", "capital_costs"}
OUT_OF_SCOPE_METRICS = {"memory_gb"}
# Assumptions no peer carbon tool models, so none can confirm them: fleet policy (finding
# thresholds, what-if settings, tolerances of the bill's own checks), a provider's published
# split definition, and money (prices, running costs).
POLICY_PREFIXES = ("findings_", "whatif_", "aws_split_", "split_sum_")
REASON_MIN_WORDS = 3


def exclusion_reason(notes: str, peer: str) -> str | None:
    """The reason a coefficient's notes give for leaving a peer's value outside its range.

    The notes must say '<peer> excluded: <reason>' (reason up to the next ';' and at least a few
    words), e.g. 'ML CO2 Impact excluded: lists the 2:4-sparse tensor rate, twice the dense one'.
    """
    m = re.search(rf"(?:^|[;.]\s*){re.escape(peer)} excluded: ([^;]+)", notes)
    if not m or len(m.group(1).split()) < REASON_MIN_WORDS:
        return None
    return m.group(1).strip()


def peer_status(value: float, low: float, high: float, notes: str, peer: str) -> str:
    """'inside' the range, 'excluded' by the notes with a reason, or 'outside' (a failure)."""
    slack = 1e-9 * max(abs(low), abs(high), 1.0)
    if low - slack <= value <= high + slack:
        return "inside"
    return "excluded" if exclusion_reason(notes, peer) else "outside"


def _in_scope(name: str, row: dict[str, str]) -> bool:
    if name == "assumptions" and (row["assumption_id"].startswith(POLICY_PREFIXES) or "USD" in row["unit"]):
        return False
    return name not in OUT_OF_SCOPE and row.get("metric") not in OUT_OF_SCOPE_METRICS


def _uncompared_group(name: str, row: dict[str, str]) -> str:
    if name == "gpu_specs":
        return f"gpu_specs {row['metric']}"
    if name == "grid_intensity":
        return f"grid_intensity {row['zone_kind']}"
    if name == "pue":
        return f"pue {row['provider'] or row['facility_type']}"
    return name


def peer_comparison(con: duckdb.DuckDBPyConnection | None = None) -> dict[str, Any]:
    """Each in-scope coefficient beside every peer value for the same item, from peer_values.csv.

    Returns {'rows', 'uncompared', 'summary'}: a row per compared coefficient (our low, central and
    high as in its file, and per peer value its status), the coefficients no peer publishes a value
    for (grouped), and counts. Figures stay the CSV text so the appendix prints what the data holds.
    """
    peers: dict[str, list[dict[str, str]]] = {}
    for p in reference_rows(None, PEER_VALUES):
        peers.setdefault(p["coefficient_id"], []).append(p)
    # A grid zone is compared through its first row (the year the peers were matched to); rows
    # appended for later years of the same zone are not listed as uncompared.
    compared_zones = {cid.rsplit(":", 2)[0] for cid in peers if cid.startswith("grid_intensity:")}
    rows: list[dict[str, Any]] = []
    uncompared: dict[str, list[str]] = {}
    for name in COEFFICIENT_FILES:
        for r in reference_rows(con, name):
            if not _in_scope(name, r):
                continue
            cid = coefficient_id(name, r)
            if cid not in peers:
                if name == "grid_intensity" and cid.rsplit(":", 2)[0] in compared_zones:
                    continue
                uncompared.setdefault(_uncompared_group(name, r), []).append(cid.split(":", 1)[1])
                continue
            low, high = float(r["low"]), float(r["high"])
            listed = [{
                "peer": p["peer"], "value": p["value"], "year": p["year"], "peer_item": p["peer_item"],
                "method": p["method"], "source": p["source"],
                "status": peer_status(float(p["value"]), low, high, r["notes"], p["peer"]),
                "reason": exclusion_reason(r["notes"], p["peer"]) or "",
            } for p in sorted(peers[cid], key=lambda p: (p["peer"], float(p["value"])))]
            statuses = {p["status"] for p in listed}
            rows.append({
                "coefficient_id": cid, "file": name, "item": cid.split(":", 1)[1], "unit": r["unit"],
                "low": r["low"], "value": r["value"], "high": r["high"], "peers": listed,
                "status": "outside" if "outside" in statuses else "explained" if "excluded" in statuses else "inside",
            })
    # Sorted: a warehouse's ref_* tables (parallel CSV reads) need not keep the file's row order.
    rows.sort(key=lambda r: (COEFFICIENT_FILES.index(r["file"]), r["coefficient_id"]))
    groups: list[dict[str, Any]] = [{"group": g, "count": len(ids), "ids": sorted(ids)} for g, ids in sorted(uncompared.items())]
    count = Counter(r["status"] for r in rows)
    summary = {"compared": len(rows), "peer_values": sum(len(r["peers"]) for r in rows),
               "inside": count["inside"], "explained": count["explained"], "outside": count["outside"],
               "uncompared": sum(g["count"] for g in groups),
               "peers": sorted({p["peer"] for r in rows for p in r["peers"]})}
    return {"rows": rows, "uncompared": groups, "summary": summary}


def format_peer_table(comparison: dict[str, Any]) -> str:
    """Plain-text table of the comparison for terminals (pytest -s, make peers)."""
    mark = {"inside": "", "excluded": " (excluded)", "outside": " OUTSIDE"}
    width = max((len(r["coefficient_id"]) for r in comparison["rows"]), default=20)
    out = [f"{'coefficient':{width}}  {'low':>12} {'central':>12} {'high':>12}  unit  peers"]
    for r in comparison["rows"]:
        peers = "; ".join(f"{p['peer']} {p['value']}{mark[p['status']]}" for p in r["peers"])
        out.append(f"{r['coefficient_id']:{width}}  {r['low']:>12} {r['value']:>12} {r['high']:>12}  {r['unit']}  {peers}")
    s = comparison["summary"]
    out.append(f"{s['compared']} coefficients compared with {s['peer_values']} peer values: {s['inside']} inside, "
               f"{s['explained']} with an exclusion explained in notes, {s['outside']} outside")
    out.append(f"{s['uncompared']} in-scope coefficients have no peer value:")
    out += [f"  {g['group']} ({g['count']}): {', '.join(g['ids'])}" for g in comparison["uncompared"]]
    return "\n".join(out)

