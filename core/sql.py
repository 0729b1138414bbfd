"""SQL text, made in one place: the models' files, their `{{ slot }}`s, quoting, and a model read
over stand-in inputs. Values a query needs at run time go as bound parameters wherever DuckDB takes
them; text is built here only where it cannot (a file path in a table function's options, a column
name, a fragment of our own SQL chosen by the reader)."""
from __future__ import annotations

import re
from functools import lru_cache
from importlib.resources.abc import Traversable
from typing import Any

import duckdb

SLOT = re.compile(r"\{\{ (\w+) \}\}")
WITH_CLAUSE = re.compile(r"^with\s", re.MULTILINE | re.IGNORECASE)
COMMENT = re.compile(r"--[^\n]*")
EPHEMERAL = "ephemeral"
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
    slot the model lacks, is a programming error and says which. The ephemeral models it reads
    come inlined (with_ephemeral)."""
    return fill(name, with_ephemeral(folder, sql_text(folder, name)), slots)


def sql_text(folder: str, name: str) -> str:
    """A model's text as written, slots unfilled (for a caller that fills them more than once)."""
    return (sql_dir() / folder / name).read_text(encoding="utf-8")


def ephemeral_models(folder: str) -> dict[str, str]:
    """{name: text} of a stage folder's ephemeral models (its `ephemeral/` folder): parts of a
    model too long to read in one file, never tables of their own (as dbt's ephemeral models)."""
    d = sql_dir() / folder / EPHEMERAL
    if not d.is_dir():
        return {}
    return {f.name.removesuffix(".sql"): f.read_text(encoding="utf-8") for f in d.iterdir() if f.name.endswith(".sql")}


@lru_cache(maxsize=1024)
def with_ephemeral(folder: str, sql: str) -> str:
    """A model's text with the ephemeral models it reads, and those they read, as its first CTEs
    (each after those it reads): one query, as if the model had been written in one file. Kept
    per process (the models ship with the code): a build reads every model's text three times,
    and finding the ephemeral names in each cost 0.1 s of a build with nothing to do."""
    models = ephemeral_models(folder)
    order: list[str] = []

    def visit(text: str, seen: tuple[str, ...]) -> None:
        code = COMMENT.sub("", text)
        for name in sorted(models):
            if name not in order and name not in seen and re.search(rf"\b{name}\b", code):
                visit(models[name], (*seen, name))
                order.append(name)

    visit(sql, ())
    return with_ctes(sql, [f"{name} as (\n{models[name]}\n)" for name in order]) if order else sql


def with_ctes(sql: str, ctes: list[str]) -> str:
    """`sql` with `ctes` ("name as (select ...)") before its own CTEs: CTEs shadow tables."""
    m = WITH_CLAUSE.search(sql)
    if m is None:
        return f"with {', '.join(ctes)} {sql}"
    return f"{sql[:m.start()]}with {', '.join(ctes)}, {sql[m.end():]}"


def table_comments(con: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    """{table: comment} of the connection's own tables (its database's main schema): tables made
    from a known input keep that input's sha256 there, and are made again only when it differs."""
    return dict(con.execute("select table_name, comment from duckdb_tables() "
                            "where database_name = current_database() and schema_name = 'main'").fetchall())


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
    return with_ctes(read_sql(folder, name), [f"{table} as ({select})" for table, select in inputs.items()])


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
