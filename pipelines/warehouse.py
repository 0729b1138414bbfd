"""Opening the warehouse: one DuckDB file, schema created on first use."""
from __future__ import annotations

import difflib
import hashlib
import os
import re
from pathlib import Path

import duckdb

from core.errors import InputError
from core.sql import literal, one_row, read_sql, sql_files, table_comments
from core.units import DCGM_BLANK_MIN, DCGM_INT32_BLANK_MAX, DCGM_INT32_BLANK_MIN, S_PER_H

DEFAULT_WAREHOUSE = Path("build/meterbook.duckdb")


def connect(path: str | Path = DEFAULT_WAREHOUSE, read_only: bool = False, create: bool = True) -> duckdb.DuckDBPyConnection:
    """Open (and, with create, on first use create) the warehouse.

    Only ingest creates one: a report or export on a misspelled --warehouse must stop, not
    create an empty warehouse and report "no months" from it (read_only implies create=False).
    DuckDB holds an exclusive lock on the file for a writer, so a second meterbook on the same
    warehouse fails here; we turn that into an `Error:` line instead of a traceback.
    """
    p = Path(path)
    if (read_only or not create) and not p.is_file():
        raise missing_warehouse(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(p), read_only=read_only)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise InputError(p, "warehouse is in use by another meterbook process", "file lock held",
                             "Wait for the other run to finish, then run this command again") from None
        raise InputError(p, "cannot open the warehouse", str(exc).splitlines()[0], "Check the path and its permissions") from None
    con.execute("set TimeZone = 'UTC'")
    # Bounded memory whatever the input size: DuckDB spills to disk past this (MB_MEMORY_LIMIT).
    con.execute(f"set memory_limit = '{memory_limit()}'")
    # Progress is tracked (the ingest ticker reads it) but never drawn: stdout carries --json.
    con.execute("set enable_progress_bar_print = false")
    con.execute("set enable_progress_bar = true")
    if not read_only:
        create_tables(con)
    add_macros(con)
    return con


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """The warehouse's tables, as both engines know them: every table file of 00_warehouse (one
    per input family), in name order; `create table if not exists`, so an existing warehouse keeps
    its rows. Every writer's connection calls this: a warehouse whose source_files table carries
    the sha256 of these files as its comment has every table and column they make, and is left
    as it is (running them costs 36 ms a connection)."""
    texts = [read_sql("00_warehouse", name) for name in sql_files("00_warehouse") if name != "macros.sql"]
    version = hashlib.sha256("\n".join(texts).encode()).hexdigest()
    if table_comments(con).get("source_files") == version:
        return
    for text in texts:
        con.execute(text)
    con.execute(f"comment on table source_files is {literal(version)}")


def database_path(con: duckdb.DuckDBPyConnection) -> str | None:
    """The file of the connection's warehouse; None for one in memory."""
    return one_row(con, "select path from duckdb_databases() where database_name = current_database()")[0]


def memory_limit() -> str:
    """DuckDB's memory limit for meterbook's connections (MB_MEMORY_LIMIT, default 2GB)."""
    limit = os.environ.get("MB_MEMORY_LIMIT", "2GB")
    if not re.fullmatch(r"\d+(\.\d+)?\s*[KMGT]i?B", limit):
        raise InputError("MB_MEMORY_LIMIT", f"not a memory size: {limit!r}", "environment", "Use e.g. 2GB or 512MiB")
    return limit


def out_of_memory(file: str | Path, doing: str) -> InputError:
    """DuckDB spills to disk, but some work (a join's or an aggregate's state it cannot split,
    a transaction's own tables) must fit in its memory limit: the error says which limit and
    how to raise it. (The failed transaction is aborted: nothing is asked of the connection.)"""
    return InputError(file, f"{doing} needs more memory than DuckDB may use", f"MB_MEMORY_LIMIT {memory_limit()}",
                      "Raise it for this run, e.g. MB_MEMORY_LIMIT=4GB meterbook ..., or load fewer months at once")


def missing_warehouse(p: Path) -> InputError:
    """The error for a warehouse that does not exist, naming a close one in the same folder."""
    near = sorted(f.name for f in p.parent.glob("*.duckdb")) if p.parent.is_dir() else []
    close = difflib.get_close_matches(p.name, near, n=1, cutoff=0.6)
    hint = f"Did you mean {p.parent / close[0]}? " if close else ""
    return InputError(p, "warehouse not found", "no such file",
                      f"{hint}Pass --warehouse with an existing warehouse, or create it with `meterbook ingest FILES --warehouse {p}`")


# Macros over unit constants (name, parameters, body), defined from core.units; the Spark
# engine expands the same definitions (pipelines.spark.dialect).
PY_MACROS: tuple[tuple[str, str, str], ...] = (
    ("dcgm_blank_min", "", repr(DCGM_BLANK_MIN)),
    ("dcgm_int32_blank", "v", f"v between {DCGM_INT32_BLANK_MIN} and {DCGM_INT32_BLANK_MAX}"),
    ("s_per_h", "", repr(S_PER_H)),
)


def add_macros(con: duckdb.DuckDBPyConnection) -> None:
    """The parsing macros of the staging models (temp, so they exist per connection)."""
    for name, params, body in PY_MACROS:
        con.execute(f"create or replace temp macro {name}({params}) as {body}")
    con.execute(read_sql("00_warehouse", "macros.sql"))
