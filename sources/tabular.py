"""Shared machinery for CSV/Parquet readers: a raw view with row numbers and canonical names,
then a staging SQL file, then the table contract as SQL checks."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from pipelines.errors import InputError
from pipelines.warehouse import read_sql
from sources.base import Head, duck_error, gzip_ok


def is_json_lines(head: Head) -> bool:
    return head.text.lstrip().startswith("{") and not head.parquet


def raw_relation_sql(head: Head, nullstr: tuple[str, ...] = ("",)) -> tuple[str, list]:
    """SQL (and its parameters) reading every column as text, in file order, with row numbers.

    Everything is read as VARCHAR so that a value that does not parse becomes a located
    reject instead of a failed or silently-null cast inside DuckDB's sniffer.
    """
    if head.parquet:
        return "select row_number() over () as row_number, * from read_parquet(?)", [str(head.path)]
    if is_json_lines(head):
        return ("select row_number() over () as row_number, * from read_json(?, format = 'newline_delimited', "
                "sample_size = -1)", [str(head.path)])
    if head.gzip:
        gzip_ok(head.path)
    nulls = ", ".join("'" + n.replace("'", "''") + "'" for n in nullstr)
    return (
        "select row_number() over () as row_number, * from read_csv(?, all_varchar = true, header = true, "
        f"nullstr = [{nulls}], strict_mode = true, null_padding = false)",
        [str(head.path)],
    )


def source_types(con: duckdb.DuckDBPyConnection, head: Head) -> dict[str, str]:
    """Column -> DuckDB type for typed sources (Parquet, JSON); text files are all VARCHAR."""
    if not head.parquet and not is_json_lines(head):
        return {}
    raw_sql, params = raw_relation_sql(head)
    try:
        return {r[0]: r[1] for r in con.execute(f"describe {raw_sql}", params).fetchall()}
    except duckdb.Error as exc:
        raise duck_error(head.path, exc) from None


def as_text(ident: str, dtype: str | None) -> str:
    """A typed column as the text a CSV export would hold: nested values as JSON, timestamps ISO."""
    if dtype is None or dtype == "VARCHAR":
        return ident
    if dtype.startswith(("MAP", "STRUCT")) or dtype.endswith("]") or dtype == "JSON":
        return f"to_json({ident})::varchar"
    if dtype.startswith("TIMESTAMP"):
        return f"strftime({ident}, '%Y-%m-%dT%H:%M:%S.%fZ')"
    return f"{ident}::varchar"


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def canonical_view(con: duckdb.DuckDBPyConnection, head: Head, aliases: dict[str, tuple[str, ...]],
                   required: set[str], view: str, nullstr: tuple[str, ...] = ("",),
                   extra_prefixes: tuple[str, ...] = ()) -> list[str]:
    """Create temp table `view` with one text column per canonical name (NULL where the file
    lacks it), whatever the container (CSV, CSV.gz, Parquet, JSON lines).

    An alias may name a nested field as `parent.child` (GCP's service.description): it matches a
    flattened column of that name, or the field inside a STRUCT column `parent`.
    Returns the source columns kept under a prefix in `extra_prefixes` (tags, x_ columns).
    """
    types = source_types(con, head)
    columns = tuple(types) if types else head.columns
    present = {c.strip(): c for c in columns}
    missing = sorted(name for name in required if not any(a in present for a in aliases[name]))
    if missing:
        raise InputError(head.path, f"missing required column{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                         "header", "Export with all mandatory columns, or pass the right --kind")
    select = ["row_number"]
    for name, alts in aliases.items():
        select.append(f"{source_expr(alts, present, types)} as {name}")
    extras = [c for c in columns if any(c.startswith(p) for p in extra_prefixes)]
    for c in extras:
        select.append(f"{as_text(quote_ident(c), types.get(c))} as {quote_ident(c)}")
    raw_sql, params = raw_relation_sql(head, nullstr)
    rel_sql = f"select {', '.join(select)} from ({raw_sql})"
    try:
        con.execute(f"create or replace temp table {view} as {rel_sql}", params)
    except duckdb.Error as exc:
        raise duck_error(head.path, exc) from None
    return extras


def source_expr(alts: tuple[str, ...], present: dict[str, str], types: dict[str, str]) -> str:
    """The first alias the file has, as text; a dotted alias may reach into a STRUCT column."""
    for a in alts:
        if a in present:
            return as_text(quote_ident(present[a]), types.get(present[a]))
        parent, _, child = a.partition(".")
        if child and parent in present and types.get(present[parent], "").startswith("STRUCT"):
            if re.search(rf'[(,]\s*"?{re.escape(child)}"?\s', types[present[parent]]):
                # JSON round trip: scalars come back as plain text, nested values as JSON text
                return f"json_extract_string(to_json({quote_ident(present[parent])}.{quote_ident(child)}), '$')"
    return "null::varchar"


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
