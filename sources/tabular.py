"""Shared machinery for CSV/Parquet readers: a raw view with row numbers and canonical names,
then a staging SQL file, then the table contract as SQL checks."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from pipelines.errors import InputError
from pipelines.warehouse import read_sql
from sources.base import Head, duck_error


def is_json_lines(head: Head) -> bool:
    return head.text.lstrip().startswith("{") and not head.parquet


def raw_relation_sql(head: Head, nullstr: tuple[str, ...] = ("",), numbered: bool = True) -> tuple[str, list]:
    """SQL (and its parameters) reading every column as text, in file order, with row numbers.

    Everything is read as VARCHAR so that a value that does not parse becomes a located
    reject instead of a failed or silently-null cast inside DuckDB's sniffer.
    """
    # The path is inlined (escaped) rather than bound: the result becomes a view, and views take
    # no parameters. A truncated gzip fails inside DuckDB's read, before anything is written.
    path = sql_str(str(head.path))
    # A window row number serialises the scan; readers with one line per row leave it out and
    # number rows by their insertion order instead (stage_sql(..., rowid_numbers=True)).
    rn = "row_number() over ()" if numbered else "null::bigint"
    if head.parquet:
        return f"select {rn} as row_number, * from read_parquet({path})", []
    if is_json_lines(head):
        return (f"select {rn} as row_number, * from read_json({path}, format = 'newline_delimited', "
                "sample_size = -1)", [])
    nulls = ", ".join(sql_str(n) for n in nullstr)
    return (
        f"select {rn} as row_number, * from read_csv({path}, all_varchar = true, header = true, "
        f"nullstr = [{nulls}], strict_mode = true, null_padding = false)",
        [],
    )


def sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def source_types(con: duckdb.DuckDBPyConnection, head: Head) -> dict[str, str]:
    """Column -> DuckDB type for typed sources (Parquet, JSON); text files are all VARCHAR."""
    if not head.parquet and not is_json_lines(head):
        return {}
    raw_sql, _ = raw_relation_sql(head)
    try:
        return {r[0]: r[1] for r in con.execute(f"describe {raw_sql}").fetchall()}
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
                   extra_prefixes: tuple[str, ...] = (), numbered: bool = True) -> list[str]:
    """Create temp table `view` with one text column per canonical name (NULL where the file
    lacks it), whatever the container (CSV, CSV.gz, Parquet, JSON lines).

    An alias may name a nested field as `parent.child` (GCP's service.description): it matches a
    flattened column of that name, or the field inside a STRUCT column `parent`.
    Returns the source columns kept under a prefix in `extra_prefixes` (tags, x_ columns).
    """
    select, extras = canonical_select(con, head, aliases, required, extra_prefixes)
    raw_sql, _ = raw_relation_sql(head, nullstr, numbered)
    # A view, not a table: the staging model reads the file once, streaming, row numbers and all.
    # Creating the view binds it, and binding makes DuckDB sniff the file: non-UTF-8 bytes or a
    # truncated gzip fail here, so they must become an InputError here too (not a traceback).
    try:
        con.execute(f"create or replace temp view {view} as select {', '.join(select)} from ({raw_sql})")
    except duckdb.Error as exc:
        raise duck_error(head.path, exc) from None
    return extras


def canonical_select(con: duckdb.DuckDBPyConnection, head: Head, aliases: dict[str, tuple[str, ...]],
                     required: set[str], extra_prefixes: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """The select list of canonical_view over the file's columns (row_number first), and the
    columns kept under an extra prefix. The Spark engine runs the same list over its own read."""
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
    return select, extras


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


def stage_sql(con: duckdb.DuckDBPyConnection, path: Path, sql_name: str, replacements: dict[str, str] | None = None,
              rowid_numbers: bool = False) -> int:
    """Run a staging model into temp table _staged, move its cast errors into _rejects, and
    return how many source rows were read (row numbers run 1..N; one row may give several lines).

    rowid_numbers: the model yields one line per source row in file order, without numbers;
    a table keeps insertion order, so its rowid + 1 is the data row number.
    """
    sql = read_sql("10_staging", sql_name)
    for key, value in (replacements or {}).items():
        sql = sql.replace("{{ " + key + " }}", value)
    try:
        if rowid_numbers:
            con.execute(f"create or replace temp table _staged_rows as {sql}")
            # rowids of rows written inside an open transaction start at a large internal offset,
            # but they are consecutive in insertion order: number from the first one
            base = con.execute("select coalesce(min(rowid), 0) from _staged_rows").fetchone()[0]
            con.execute(f"create or replace temp view _staged as select rowid - {int(base)} + 1 as row_number, "
                        "* exclude (row_number) from _staged_rows")
        else:
            con.execute(f"create or replace temp table _staged as {sql}")
    except duckdb.Error as exc:
        raise duck_error(path, exc) from None
    con.execute("""
        insert into _rejects
        select row_number, e.column_name, e.check_name, e.value, e.message
        from (select row_number, unnest(_errors) as e from _staged where len(_errors) > 0)
    """)
    return con.execute("select coalesce(max(row_number), 0) from _staged").fetchone()[0]
