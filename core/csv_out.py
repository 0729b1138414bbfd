"""The one CSV writer: every CSV meterbook writes has its formula-leading text neutralised and
appears whole or not at all.

A spreadsheet runs a cell that begins with = + - @ (or a tab or CR before one) as a formula, so a
tag value such as `=HYPERLINK(...)` or `+cmd|' /C calc'!A0` would run on the reader's machine
(OWASP, "CSV Injection"). Text cells that begin so get a leading quote, which a spreadsheet shows
as text; numbers are never touched, so a negative amount stays a number (-12.50). Two shapes,
one rule: rows from Python (safe_cell, as the reports write them) and rows that DuckDB streams
straight to the file (copy_csv, as the exports write them: nothing of a month passes through
Python). Either way the file is written through core.atomic (beside its target, flushed, renamed over
it), so a reader never sees half a file and a failed write leaves the old one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from core import atomic
from core.sql import ident, literal

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# DuckDB types whose values print as text a spreadsheet could read as a formula; numbers, dates,
# lists ([...]) and maps ({...}) cannot begin with a formula character.
TEXT_TYPES = ("VARCHAR", "JSON")


def safe_cell(v: Any) -> Any:
    """Text that a spreadsheet would run as a formula is prefixed with a quote; numbers stay numbers."""
    if isinstance(v, str) and v.startswith(FORMULA_START):
        return "'" + v
    return v


def safe_sql(column: str) -> str:
    """safe_cell as a DuckDB expression over a text column."""
    c = ident(column)
    starts = ", ".join(literal(s) for s in FORMULA_START)
    return f"case when left({c}, 1) in ({starts}) then '''' || {c} else {c} end"


def write_text(path: Path, text: str) -> Path:
    """Write a whole text file (a CSV from csv_text) atomically."""
    return atomic.write_text(path, text)


def copy_csv(con: duckdb.DuckDBPyConnection, query: str, params: list, path: Path, options: str = "",
             then: str = "select * from rows") -> Path:
    """COPY a query's rows to a CSV, atomically, through `then` (a query over `rows` that prints
    numbers, e.g. money in its minor unit). The query's text columns are neutralised before `then`
    sees them, so numbers printed as text stay numbers."""
    types = {r[0]: r[1] for r in con.execute(f"describe {query}", params).fetchall()}
    text = [c for c, t in types.items() if t in TEXT_TYPES]
    safe = f"select * replace ({', '.join(f'{safe_sql(c)} as {ident(c)}' for c in text)}) from ({query})" if text \
        else query
    return atomic.replace_file(path, lambda tmp: con.execute(
        f"copy (with rows as ({safe}) {then}) to {literal(str(tmp))} (format csv{', ' + options if options else ''})",
        params))


def copy_parquet(con: duckdb.DuckDBPyConnection, query: str, params: list, path: Path) -> Path:
    """COPY a query's rows to Parquet as they are (typed, exact), atomically."""
    return atomic.replace_file(path, lambda tmp: con.execute(
        f"copy ({query}) to {literal(str(tmp))} (format parquet)", params))
