"""SQL text, made in one place: the models' files, their `{{ slot }}`s, quoting, and a model read
over stand-in inputs. Values a query needs at run time go as bound parameters wherever DuckDB takes
them; text is built here only where it cannot (a file path in a table function's options, a column
name, a fragment of our own SQL chosen by the reader)."""
from __future__ import annotations

import re
from importlib.resources.abc import Traversable
from typing import Any

import duckdb

SLOT = re.compile(r"\{\{ (\w+) \}\}")
WITH_CLAUSE = re.compile(r"^with\s", re.MULTILINE | re.IGNORECASE)
_SQL_DIR: list[Traversable] = []


def use_sql_dir(folder: Traversable) -> None:
    """Register the folder of the SQL stages (00_warehouse, 10_staging...): the layer that ships
    the models registers it on import, so the ground floor names no package above it."""
    _SQL_DIR[:] = [folder]


def sql_dir() -> Traversable:
    if not _SQL_DIR:
        raise LookupError("no SQL folder registered: importing the pipelines package registers its own")
    return _SQL_DIR[0]


def sql_files(folder: str) -> list[str]:
    """The .sql files of one stage folder, in name order."""
    return sorted(f.name for f in (sql_dir() / folder).iterdir() if f.name.endswith(".sql"))


def read_sql(folder: str, name: str, **slots: str) -> str:
    """A model's text with its `{{ slot }}`s filled by fragments of our own SQL (never user text:
    user values are quoted with literal()/ident() or bound). A slot left empty, or a fragment for a
    slot the model lacks, is a programming error and says which."""
    return fill(name, sql_text(folder, name), slots)


def sql_text(folder: str, name: str) -> str:
    """A model's text as written, slots unfilled (for a caller that fills them more than once)."""
    return (sql_dir() / folder / name).read_text(encoding="utf-8")


def fill(name: str, sql: str, slots: dict[str, str]) -> str:
    present = set(SLOT.findall(sql))
    if unknown := set(slots) - present:
        raise KeyError(f"{name} has no slot {sorted(unknown)[0]!r}")
    if missing := present - set(slots):
        raise KeyError(f"{name} needs slot {sorted(missing)[0]!r}")
    return SLOT.sub(lambda m: slots[m.group(1)], sql)


def literal(value: Any) -> str:
    """A SQL literal: a string quoted ('it''s': paths and names inside table-function options),
    a boolean or a number as itself (the bounds of a contract's checks)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def ident(name: str) -> str:
    """A quoted identifier ("line_item/UnblendedCost"): source column names as files spell them."""
    return '"' + str(name).replace('"', '""') + '"'


def model_over(folder: str, name: str, inputs: dict[str, str]) -> str:
    """A model's SQL reading `inputs` ({table: select}) in place of the warehouse tables of those
    names: CTEs shadow tables, so the one formula of a model also answers for a part of the data
    (one file's telemetry, say) without a second copy of it. The selects are our own SQL with
    bound parameters, never user text."""
    sql = read_sql(folder, name)
    m = WITH_CLAUSE.search(sql)
    ctes = ", ".join(f"{table} as ({select})" for table, select in inputs.items())
    if m is None:
        return f"with {ctes} {sql}"
    return f"{sql[:m.start()]}with {ctes}, {sql[m.end():]}"


def one_row(con: duckdb.DuckDBPyConnection, sql: str, params: object = None) -> tuple[Any, ...]:
    """The row of a query that returns exactly one (an aggregate without `group by`, a nextval):
    DuckDB types fetchone() as optional, and a missing row here is a bug in the query, not data.
    Fetched to the end: a result left open blocks the connection's next relation (DuckDB 1.5)."""
    rows = con.execute(sql, params).fetchall()
    if not rows:
        raise LookupError(f"expected one row, got none: {' '.join(sql.split())[:120]}")
    return rows[0]


def rows_as_dicts(con: duckdb.DuckDBPyConnection, sql: str, params: list | dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """A query's rows as {column: value}: what the report contexts and templates read."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return one_row(con, "select count(*) from information_schema.tables where table_name = ?", [name])[0] > 0
