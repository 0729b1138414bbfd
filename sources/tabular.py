"""Shared machinery for CSV/Parquet readers: a raw view with row numbers and canonical names,
then a staging SQL file, then the table contract as SQL checks."""
from __future__ import annotations

from pathlib import Path

import duckdb

from pipelines.errors import InputError
from pipelines.warehouse import read_sql
from sources.base import Head, duck_error, gzip_ok


def raw_relation_sql(head: Head, nullstr: tuple[str, ...] = ("",)) -> tuple[str, list]:
    """SQL (and its parameters) reading every column as text, in file order, with row numbers.

    Everything is read as VARCHAR so that a value that does not parse becomes a located
    reject instead of a failed or silently-null cast inside DuckDB's sniffer.
    """
    if head.parquet:
        return "select row_number() over () as row_number, * from read_parquet(?)", [str(head.path)]
    if head.gzip:
        gzip_ok(head.path)
    nulls = ", ".join("'" + n.replace("'", "''") + "'" for n in nullstr)
    return (
        "select row_number() over () as row_number, * from read_csv(?, all_varchar = true, header = true, "
        f"nullstr = [{nulls}], strict_mode = true, null_padding = false)",
        [str(head.path)],
    )


def canonical_view(con: duckdb.DuckDBPyConnection, head: Head, aliases: dict[str, tuple[str, ...]],
                   required: set[str], view: str, nullstr: tuple[str, ...] = ("",),
                   extra_prefixes: tuple[str, ...] = ()) -> list[str]:
    """Create temp view `view` with one column per canonical name (NULL where the file lacks it).

    Returns the source columns kept under a prefix in `extra_prefixes` (tags, x_ columns).
    """
    present = {c.strip(): c for c in head.columns}
    missing = sorted(name for name in required if not any(a in present for a in aliases[name]))
    if missing:
        raise InputError(head.path, f"missing required column{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                         "header", "Export with all mandatory columns, or pass the right --kind")
    select = ["row_number"]
    for name, alts in aliases.items():
        src = next((present[a] for a in alts if a in present), None)
        select.append(f'"{src.replace(chr(34), chr(34) * 2)}" as {name}' if src else f"null::varchar as {name}")
    extras = [c for c in head.columns if any(c.startswith(p) for p in extra_prefixes)]
    for c in extras:
        select.append('"' + c.replace('"', '""') + '"')
    raw_sql, params = raw_relation_sql(head, nullstr)
    rel_sql = f"select {', '.join(select)} from ({raw_sql})"
    try:
        con.execute(f"create or replace temp table {view} as {rel_sql}", params)
    except duckdb.Error as exc:
        raise duck_error(head.path, exc) from None
    return extras


def stage_sql(con: duckdb.DuckDBPyConnection, path: Path, sql_name: str, replacements: dict[str, str] | None = None) -> None:
    """Run a staging model into temp table _staged and move its cast errors into _rejects."""
    sql = read_sql("10_staging", sql_name)
    for key, value in (replacements or {}).items():
        sql = sql.replace("{{ " + key + " }}", value)
    try:
        con.execute(f"create or replace temp table _staged as {sql}")
    except duckdb.Error as exc:
        raise duck_error(path, exc) from None
    con.execute("""
        insert into _rejects
        select row_number, e.column_name, e.check_name, e.value, e.message
        from (select row_number, unnest(_errors) as e from _staged)
    """)
