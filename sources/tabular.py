"""Shared machinery for CSV/Parquet readers: a raw view with row numbers and canonical names,
then a staging SQL file, then the table contract as SQL checks."""
from __future__ import annotations

import contextlib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator

import duckdb

from core.errors import InputError
from core.sql import ident, literal, one_row, read_sql
from sources.base import Head, Restage, duck_error
from sources.linecount import LineCount
from sources.text_parts import TextParts


def is_json_lines(head: Head) -> bool:
    return head.text.lstrip().startswith("{") and not head.parquet


# Stands for NULL in read_csv and never occurs in text: every cell is read as written ('' stays
# ''), so a NULL can only be a cell a short row did not have (null_padding).
NEVER = "\x00"


class ShortRows(InputError):
    """A CSV row's field count differs from the header's: the runner stages the file again with
    short rows padded (a trailing comma in the header, a ragged hand-edited file). Raised from a
    padded read it is the user's Error: a row longer than the header has a field too many, and
    which one is unknown."""


def csv_names(head: Head) -> tuple[str, ...]:
    """Header names without trailing empty ones: a header ending in a comma names no column
    there, and its rows often stop a field earlier (read padded when they do not)."""
    names = list(head.columns)
    while names and names[-1] == "":
        names.pop()
    return tuple(names)


def csv_read(head: Head, padded: bool = False, types: dict[int, str] | None = None,
             timestamp_format: str | None = None, sniffed: bool = False, also: tuple[Head, ...] = ()) -> str:
    """read_csv with the dialect stated, never sniffed (but see `sniffed`): comma, double quote
    doubled to escape it, no comment character (DuckDB once took ` # notsecret` ending every CUR
    row for a comment and read none), columns c0..cN by position (header names may repeat,
    differ only in case, or hold quotes). The header is skipped by line count, not parsed by DuckDB.

    padded: short rows are filled with NULL (and, since DuckDB cannot pad rows beside a quoted
    line break in parallel, read on one thread); the width is then the header's full field count.
    types: column position -> DuckDB type, where the caller wants the parser to type a column
    (every other column is VARCHAR); a cell that does not parse fails the whole read.
    also: more files of the same header read with it (a batch), each row with its `filename`.
    sniffed: DuckDB's sniffer reads a sample all the same. Every option but the line break is
    stated, so it decides nothing else; but its sample is DuckDB's only estimate of the file's
    rows: unsniffed, a GB of telemetry was planned as ~42 rows and its grouping took 0.2 s
    longer on two cores (issue 24). The sniffer raises at bind time, on a sample the read would
    have failed later or read another way, so only a caller with a fallback asks for it.
    """
    width = len(head.columns) if padded else len(csv_names(head))
    cols = ", ".join(f"'c{i}': '{(types or {}).get(i, 'VARCHAR')}'" for i in range(max(width, 1)))
    fmt = f"timestampformat = {literal(timestamp_format)}, " if timestamp_format else ""
    src = literal(str(head.path)) if not also else "[" + ", ".join(literal(str(h.path)) for h in (head, *also)) + "]"
    more = "filename = true, " if also else ""
    return (f"read_csv({src}, header = false, skip = {head.header_lines}, auto_detect = {str(sniffed).lower()}, {more}"
            f"columns = {{{cols}}}, delim = ',', quote = '\"', escape = '\"', comment = '', {fmt}"
            f"nullstr = '{NEVER}', strict_mode = true, null_padding = {str(padded).lower()}, parallel = {str(not padded).lower()}, "
            f"compression = '{'gzip' if head.gzip else 'none'}')")


def cell(column: str, nullstr: tuple[str, ...]) -> str:
    """A CSV cell as text, NULL where it holds one of the file's null spellings (empty, NULL)."""
    if len(nullstr) == 1:
        return f"nullif({column}, {literal(nullstr[0])})"
    return f"case when {column} in ({', '.join(literal(n) for n in nullstr)}) then null else {column} end"


def raw_relation_sql(head: Head, nullstr: tuple[str, ...] = ("",), numbered: bool = True) -> tuple[str, list]:
    """SQL (and its parameters) reading every column as text, in file order, with row numbers.

    Everything is read as VARCHAR so that a value that does not parse becomes a located
    reject instead of a failed or silently-null cast inside DuckDB's sniffer. (Parquet and JSON
    lines only: CSV goes through csv_read, by position.)
    """
    # The path is inlined (escaped) rather than bound: the result becomes a view, and views take
    # no parameters. A truncated gzip fails inside DuckDB's read, before anything is written.
    path = literal(str(head.path))
    # A window row number serialises the scan; readers with one line per row leave it out and
    # number rows by their insertion order instead (stage_sql(..., rowid_numbers=True)).
    # Parquet numbers its rows itself, on every thread.
    rn = "row_number() over ()" if numbered else "null::bigint"
    if head.parquet:
        return (f"select file_row_number + 1 as row_number, * exclude (file_row_number) "
                f"from read_parquet({path}, file_row_number = true)"), []
    return (f"select {rn} as row_number, * from read_json({path}, format = 'newline_delimited', "
            "sample_size = -1)", [])


def tabular_dialect(head: Head) -> str | None:
    """How the independent count reads a tabular file: Parquet has no lines, JSON lines are lines."""
    return None if head.parquet else "lines" if is_json_lines(head) else "csv"


def tabular_expected_rows(con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None,
                          staged_headers: int = 1) -> int | None:
    """Data rows by the independent count: CSV records less the header records (one, or one per
    part of concatenated files), JSON lines as they are, Parquet rows as its footer states them
    (metadata, not a scan)."""
    if head.parquet:
        return int(one_row(con, "select sum(num_rows) from parquet_file_metadata(?)", [str(head.path)])[0] or 0)
    if count is None:
        return None
    return count.content - (0 if is_json_lines(head) else min(staged_headers, count.content))


def source_types(con: duckdb.DuckDBPyConnection, head: Head) -> dict[str, str]:
    """Column -> DuckDB type for typed sources (Parquet, JSON); text files are all VARCHAR."""
    if not head.parquet and not is_json_lines(head):
        return {}
    raw_sql, _ = raw_relation_sql(head)
    try:
        return {r[0]: r[1] for r in con.execute(f"describe {raw_sql}").fetchall()}
    except duckdb.Error as exc:
        raise duck_error(head.path, exc) from None


def as_text(column: str, dtype: str | None) -> str:
    """A typed column as the text a CSV export would hold: nested values as JSON, timestamps ISO."""
    if dtype is None or dtype == "VARCHAR":
        return column
    if dtype.startswith(("MAP", "STRUCT")) or dtype.endswith("]") or dtype == "JSON":
        return f"to_json({column})::varchar"
    if dtype.startswith("TIMESTAMP"):
        return f"strftime({column}, '%Y-%m-%dT%H:%M:%S.%fZ')"
    return f"{column}::varchar"


def canonical_view(con: duckdb.DuckDBPyConnection, head: Head, aliases: dict[str, tuple[str, ...]],
                   required: set[str], view: str, nullstr: tuple[str, ...] = ("",),
                   extra_prefixes: tuple[str, ...] = (), numbered: bool = True, padded: bool = False,
                   defaults: dict[str, str] | None = None, keep_as_written: Callable[[str], bool] | None = None,
                   parts: TextParts | None = None, localised: bool = False) -> list[str]:
    """Create temp view `view` with one text column per canonical name (NULL where the file
    lacks it), whatever the container (CSV, CSV.gz, Parquet, JSON lines).

    An alias may name a nested field as `parent.child` (GCP's service.description): it matches a
    flattened column of that name, or the field inside a STRUCT column `parent`. Names match
    exactly, else ignoring case (Azure writes PreTaxCost and preTaxCost). `defaults` gives an
    SQL literal for a canonical name the file lacks. CSV rows also get `_fields`: NULL for a
    whole row, else (padded reads only) how many fields a short row had.
    `parts`: a CSV's text being cut at record ends (sources.text_parts): the view reads the
    parts written so far (view _raw_parts, which next_parts moves on), side by side, each
    numbered from its first row: row numbers on every thread.
    Returns the source columns kept under a prefix in `extra_prefixes` (tags, x_ columns).
    keep_as_written: the source columns it accepts also go, by their header name and as text
    (nulls as above), into one MAP column `_source_columns`, for exports that carry them through.
    localised: a header may carry its English name in parentheses (english_name).
    """
    select, extras = canonical_select(con, head, aliases, required, nullstr, extra_prefixes, padded, defaults, keep_as_written,
                                      localised)
    if head.parquet or is_json_lines(head):
        raw_sql, _ = raw_relation_sql(head, nullstr, numbered)
    elif parts is not None:
        if not next_parts(con, head, parts):
            raise Restage({"parts": None}, f"no parts: {parts.failed or 'empty'}")
        raw_sql = f"select * from {PARTS_VIEW}"
    else:
        rn = "row_number() over ()" if numbered else "null::bigint"
        raw_sql = f"select {rn} as row_number, * from {csv_read(head, padded)}"
    # A view, not a table: the staging model reads the file once, streaming, row numbers and all.
    # Creating the view binds it; a Parquet or JSON file is opened then, so a broken one must
    # become an InputError here too (not a traceback).
    try:
        con.execute(f"create or replace temp view {view} as select {', '.join(select)} from ({raw_sql})")
    except duckdb.Error as exc:
        raise duck_error(head.path, exc) from None
    return extras


def canonical_select(con: duckdb.DuckDBPyConnection, head: Head, aliases: dict[str, tuple[str, ...]], required: set[str],
                     nullstr: tuple[str, ...] = ("",), extra_prefixes: tuple[str, ...] = (), padded: bool = False,
                     defaults: dict[str, str] | None = None,
                     keep_as_written: Callable[[str], bool] | None = None, localised: bool = False) -> tuple[list[str], list[str]]:
    """The select list of canonical_view over the file's raw relation (row_number, then c0..cN
    for CSV, the typed columns otherwise), and the columns kept under an extra prefix. The Spark
    engine runs the same list over its own read of the file."""
    types = source_types(con, head)
    csv = not types
    columns = tuple(types) if types else csv_names(head)
    present = present_names(columns, localised)
    defaults = defaults or {}
    # named as the export names them (an alias's first spelling), not by our canonical name
    missing = sorted(aliases[name][0] for name in required if name not in defaults and matched(present, aliases[name]) is None)
    if missing:
        raise InputError(head.path, f"missing required column{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                         "header", "Export with all mandatory columns, or pass the right --kind")
    position = {c: i for i, c in reversed(list(enumerate(columns)))}    # first of repeated names

    def text(col: str) -> str:
        return cell(f"c{position[col]}", nullstr) if csv else as_text(ident(col), types.get(col))

    select = ["row_number"]
    for name, alts in aliases.items():
        found = matched(present, alts)
        expr = text(found) if found is not None else defaults.get(name) or source_expr(alts, present, types)
        select.append(f"{expr} as {name}")
    extras = [c for c in columns if any(c.startswith(p) for p in extra_prefixes)]
    select += [f"{text(c)} as {ident(c)}" for c in extras]
    if keep_as_written is not None:
        kept = [c for c in dict.fromkeys(columns) if keep_as_written(c)]
        select.append(f"map([{', '.join(literal(c) for c in kept)}]::varchar[], [{', '.join(text(c) for c in kept)}]::varchar[])"
                      " as _source_columns")
    if csv and padded:
        last = len(columns) - 1
        every = ", ".join(f"c{i}" for i in range(len(columns)))
        select.append(f"case when c{last} is null then len(list_filter([{every}], lambda x: x is not null)) end as _fields")
    else:
        select.append("null::int as _fields")
    return select, extras


def english_name(column: str) -> str:
    """A localised header's English name where it carries one in parentheses (Azure exports in
    other languages: `Kosten (Cost)`, `Datum (Date)`), else the name itself."""
    m = re.fullmatch(r".*\(\s*([A-Za-z][A-Za-z0-9_/.]*)\s*\)\s*", column)
    return m.group(1) if m else column


def present_names(columns: tuple[str, ...], localised: bool = False) -> dict[str, str]:
    """The names an alias may match -> the file's column: each name as written (trimmed), then
    ignoring case, then (localised) the English name a localised header carries. Only where a
    format is exported localised: elsewhere a parenthesised word is a qualifier, not a name
    (Electricity Maps' `Carbon Intensity gCO₂eq/kWh (direct)`)."""
    present = {c.strip(): c for c in columns}
    for c in columns:
        present.setdefault(c.strip().lower(), c)
    for c in columns if localised else ():
        present.setdefault(english_name(c.strip()), c)
        present.setdefault(english_name(c.strip()).lower(), c)
    return present


def matched(present: dict[str, str], alts: tuple[str, ...]) -> str | None:
    """The file's column for the first alias it has (present: present_names)."""
    return next((present.get(a, present.get(a.lower())) for a in alts if a in present or a.lower() in present), None)


def source_name(columns: tuple[str, ...], alts: tuple[str, ...], localised: bool = False) -> str | None:
    """The file's own name of the column that canonical_select reads for these aliases."""
    return matched(present_names(columns, localised), alts)


PARTS_VIEW = "_raw_parts"


def next_parts(con: duckdb.DuckDBPyConnection, head: Head, parts: TextParts) -> bool:
    """Point view _raw_parts at the parts written since the last call (waiting for one): each
    read on its own (one thread, ordinality) and numbered from its first row, all side by side.
    The parts it pointed at before are loaded by then and deleted. False once every part was
    taken; Restage when splitting stopped (the file is then read as it is)."""
    for done in parts.taken:
        done.path.unlink(missing_ok=True)
    batch = parts.take()
    if batch is None:
        raise Restage({"parts": None}, f"the text could not be cut: {parts.failed}")
    parts.taken = batch
    if not batch:
        return False
    con.execute(f"create or replace temp view {PARTS_VIEW} as " + " union all ".join(
        f"select {p.rows_before} + ordinality as row_number, * exclude (ordinality) "
        f"from {csv_read(replace(head, path=p.path, gzip=False, header_lines=p.skip_lines))} with ordinality"
        for p in batch))
    return True


def source_expr(alts: tuple[str, ...], present: dict[str, str], types: dict[str, str]) -> str:
    """The first alias the file has, as text; a dotted alias may reach into a STRUCT column."""
    for a in alts:
        if a in present:
            return as_text(ident(present[a]), types.get(present[a]))
        parent, _, child = a.partition(".")
        if child and parent in present and types.get(present[parent], "").startswith("STRUCT"):
            if re.search(rf'[(,]\s*"?{re.escape(child)}"?\s', types[present[parent]]):
                # JSON round trip: scalars come back as plain text, nested values as JSON text
                return f"json_extract_string(to_json({ident(present[parent])}.{ident(child)}), '$')"
    return "null::varchar"


def column_count_error(exc: Exception) -> bool:
    """DuckDB's strict CSV parser met a row whose field count differs from the columns given."""
    return re.search(r"Expected Number of Columns: \d+ Found: \d+", str(exc)) is not None


# Plan nodes that emit rows out of their input's order (insertion order is kept through scans,
# filters and projections only)
REORDERING = ("JOIN", "CROSS_PRODUCT", "GROUP_BY", "UNION", "ORDER_BY", "TOP_N")


def file_order(con: duckdb.DuckDBPyConnection, select_sql: str) -> None:
    """Before a statement writing `select_sql`'s rows, whose insertion order numbers them: rows
    keep the file's order only through a plan without joins. DuckDB plans an IN list of five or
    more values (or a list_contains) as a join, and a join passes rows on out of order: a
    1M-line CUR staged with its line item types IN (...) numbered every row past 21,830 from
    elsewhere in the file. So the optimizer that makes those joins is turned off (the comparisons
    it leaves cost nothing measurable; pipelines.ingest turns it back on when done: a SET fails
    in a transaction a failed read aborted), and a plan that still reorders is refused: it is a
    staging model in need of a fix, never a file's fault."""
    disabled = one_row(con, "select current_setting('disabled_optimizers')")[0]
    if "in_clause" not in disabled.split(","):
        con.execute(f"set disabled_optimizers = {literal(','.join(filter(None, [disabled, 'in_clause'])))}")
    nodes = list(json.loads(one_row(con, f"explain (format json) {select_sql}")[1]))
    while nodes:
        node = nodes.pop()
        if any(word in node["name"] for word in REORDERING):
            raise RuntimeError(f"rows numbered by their order pass through {node['name']}, which reorders them: "
                               "keep joins and aggregates out of models staged with rowid numbers")
        nodes.extend(node.get("children", []))


def read_error(path: Path, exc: Exception) -> InputError:
    """A DuckDB error reading a CSV as the Error: line it stands for; a row with the wrong number
    of fields as ShortRows (the runner reads the file again, padded)."""
    err = duck_error(path, exc)
    return ShortRows(err.file, err.what, err.where, err.fix) if column_count_error(exc) else err


@contextlib.contextmanager
def read_errors(path: Path) -> Iterator[None]:
    """A statement reading the file: its DuckDB read errors raised as `read_error` gives them."""
    try:
        yield
    except duckdb.Error as exc:
        raise read_error(path, exc) from None


def stage_view(con: duckdb.DuckDBPyConnection, path: Path, sql_name: str, replacements: dict[str, str] | None = None) -> None:
    """The staging model as temp view _staged, read by a later statement (which reads the file
    under read_errors); creating the view binds it, so a file that cannot be opened stops here."""
    with read_errors(path):
        con.execute(f"create or replace temp view _staged as {read_sql('10_staging', sql_name, **(replacements or {}))}")


def stage_sql(con: duckdb.DuckDBPyConnection, path: Path, sql_name: str, replacements: dict[str, str] | None = None,
              rowid_numbers: bool = False) -> int:
    """Run a staging model into temp table _staged, move its cast errors (`_errors`: the row is
    not loaded) into _rejects and its field notes (`_notes`: the row loads, that field null) into
    _row_findings, and return how many source rows were read (row numbers run 1..N; one row may
    give several lines).

    rowid_numbers: the model yields one line per source row in file order, without numbers;
    a table keeps insertion order, so its rowid + 1 is the data row number.
    """
    sql = read_sql("10_staging", sql_name, **(replacements or {}))
    with read_errors(path):
        if rowid_numbers:
            file_order(con, sql)
            con.execute(f"create or replace temp table _staged_rows as {sql}")
            # rowids of rows written inside an open transaction start at a large internal offset,
            # but they are consecutive in insertion order: number from the first one
            base = one_row(con, "select coalesce(min(rowid), 0) from _staged_rows")[0]
            con.execute(f"create or replace temp view _staged as select rowid - {int(base)} + 1 as row_number, "
                        "* exclude (row_number) from _staged_rows")
        else:
            con.execute(f"create or replace temp table _staged as {sql}")
    move_failures(con, "_staged", "_errors", "_notes")
    return one_row(con, "select coalesce(max(row_number), 0) from _staged")[0]


def move_failures(con: duckdb.DuckDBPyConnection, relation: str, errors: str, notes: str) -> None:
    """The located failures of `relation`'s rows, lists in the _rejects shape: column `errors`
    into _rejects (the row is not loaded), column `notes` (where it has one) into _row_findings.
    Once each: the lines of one source row (a GCP row and its credits) fail a row's check alike."""
    have = {r[0] for r in con.execute(f"describe {relation}").fetchall()}
    for column, table in ((errors, "_rejects"), (notes, "_row_findings")):
        if column not in have:
            continue
        con.execute(f"""
            insert into {table}
            select distinct row_number, e.column_name, e.check_name, e.value, e.message
            from (select row_number, unnest({column}) as e from {relation} where len({column}) > 0)
        """)
