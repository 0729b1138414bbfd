"""Billing line items staged in place: one pass over the file writes them into `charges`.

Staging into a temp table and then inserting into `charges` wrote every row twice, and the temp
table holds about 470 bytes a line uncompressed: a 5M-line CUR filled the 2 GB memory limit and
spilled to disk, a 20M-line one would spill about 7 GB. Here the staging model's rows go straight
into `charges`, in one INSERT ... SELECT, under the file's own id (the runner allots it before
staging), all inside the file's transaction (nothing is seen before the commit):

- Rows come numbered when the file can number them on every thread: a CSV read as parts
  (sources/text_parts.py), a Parquet file by its own row numbers. They are written once, in
  any order. Otherwise every row is written in file order (a table keeps insertion order, so
  rowid - first rowid + 1 is the data row number) and numbered by one UPDATE afterwards, which
  makes the commit write every line again: the way for files that cannot be split.
- `line_item_hash` holds a 62-bit hash of the line item key: no repeated hash among the loaded
  rows proves no line item is repeated.
- A row failing a cast or a contract check (schemas.contract, in the same pass) is a tombstone:
  charge_line TOMBSTONE, its NOT NULL columns filled with placeholders, its failures as JSON in
  charge_description. They become _rejects; load() deletes the tombstones.
- What only the full staging handles - a field note on a loaded row, a blank currency the file's
  other rows fill, a repeated key hash (a duplicate line item, or a hash collision) - raises
  Restage: the runner rolls back and stages the file again the full way, which is unchanged.
  Parts whose numbers leave a gap (blank lines inside the file, which DuckDB skips) or that
  DuckDB cannot read (its error would name a part, not the file) restage without parts.
"""
from __future__ import annotations

import duckdb

from core.sql import one_row
from schemas.contract import failing_sql, failures_sql
from sources.base import Head, Restage
from sources.tabular import file_order, next_parts, read_errors
from sources.text_parts import TextParts

TOMBSTONE = -1        # charge_line of a rejected row (deleted before load)
NEEDS_FULL = -2       # charge_line of a row only the full staging can load
FAILURES_JSON = '[{"column_name": "VARCHAR", "check_name": "VARCHAR", "value": "VARCHAR", "message": "VARCHAR"}]'


def placeholder(dtype: str) -> str:
    """A value of the type for a tombstone's NOT NULL column (the row is deleted unseen)."""
    if dtype == "VARCHAR":
        return "''"
    if dtype.startswith("TIMESTAMP"):
        return "timestamp 'epoch'"
    return f"0::{dtype}"


def stage_in_place(con: duckdb.DuckDBPyConnection, head: Head, file_id: int, numbered: bool,
                   parts: TextParts | None = None) -> int:
    """Insert view _lines (the staging model with the instance catalog's GPUs) into charges as
    described above, under `file_id`; leave the loaded rows numbered, their rejects in
    _rejects, and view _lines over them. `numbered`: _lines carries its rows' numbers (else
    they are taken from the order rows are written in); `parts`: it reads a CSV's parts as
    they are written, so the lines are inserted a batch of parts at a time. Returns the rows read."""
    cols = {r[0] for r in con.execute("describe _lines").fetchall()}
    # charge_description is always written: a tombstone carries its failures there
    target = [(c, t, n) for c, t, n in con.execute(
        "select column_name, data_type, is_nullable = 'YES' from information_schema.columns "
        "where table_name = 'charges' and column_name not in ('file_id', 'row_number', 'charge_line', 'charge_description', "
        "'line_item_hash') order by ordinal_position").fetchall() if c in cols]
    from schemas.charges import Charges  # pandera and pandas: imported when a file is staged
    checked = cols - {"row_number"}     # numbered from 1: never null
    # the staging model's cast errors, the checks of the resolved line (sources.billing.line_checks_sql),
    # then the contract's
    located = [c for c in ("_errors", "_line_errors") if c in cols]
    bad = " or ".join([f"len({c}) > 0" for c in located] + list(filter(None, [failing_sql(Charges, checked)]))) or "false"
    failures = failures_sql(Charges, checked) or "[]"
    for column in reversed(located):
        failures = f"list_concat({column}, {failures})"
    notes = " or ".join(f"len({c}) > 0" for c in ("_notes", "_line_notes") if c in cols) or "false"
    key = "case when not _bad then line_item_hash end" if "line_item_hash" in cols else "null"

    def value(col: str, dtype: str, nullable: bool) -> str:
        return col if nullable else f"coalesce({col}, {placeholder(dtype)})"

    select = f"""
        select {int(file_id)}, {"row_number" if numbered else "0"},
               case when billing_currency is null then {NEEDS_FULL} when _bad then {TOMBSTONE}
                    when {notes} then {NEEDS_FULL} else 0 end,
               {", ".join(value(*t) for t in target)},
               case when _bad then to_json({failures})::varchar else {"charge_description" if "charge_description" in cols else "null"} end,
               {key}
        from (select *, {bad} as _bad from _lines)"""
    insert = f"""insert into charges (file_id, row_number, charge_line, {", ".join(c for c, _, _ in target)},
                                      charge_description, line_item_hash) {select}"""
    with read_errors(head.path):
        if not numbered:
            file_order(con, select)
            rows_read = one_row(con, insert)[0]
        else:
            # rows carry their numbers: written as the threads finish, not in file order.
            # (The runner resets this before staging again after a failed statement.)
            con.execute("set preserve_insertion_order = false")
            rows_read = 0
            try:
                while True:
                    rows_read += one_row(con, insert)[0]
                    if parts is None or not next_parts(con, head, parts):
                        break
            except duckdb.Error as exc:
                # a part is not the file: its error would locate the wrong line in the wrong file
                if parts is not None and not isinstance(exc, duckdb.InterruptException):
                    raise Restage({"parts": None}, f"read as parts: {str(exc).splitlines()[0]}") from exc
                raise
            con.execute("reset preserve_insertion_order")
    needs_full, first, last, low, high = one_row(con, f"""
        select count(*) filter (where charge_line = {NEEDS_FULL}), min(rowid), max(rowid), min(row_number), max(row_number)
        from charges where file_id = {int(file_id)}""")
    if needs_full:
        raise Restage({"full": True}, f"{needs_full} rows with a field note or a blank currency")
    # a repeated hash, found by sorting them and comparing neighbours: 1.0 s for 20M lines, where
    # a group-by (a hash table of 20M keys) took 1.8-2.5 s (issue 24)
    if one_row(con, f"""select count(*) from (
                            select line_item_hash as h, lag(line_item_hash) over (order by line_item_hash) as before
                            from charges where file_id = {int(file_id)} and line_item_hash is not null)
                        where h = before""")[0]:
        raise Restage({"full": True}, "a line item key hash seen twice")
    if numbered:
        if rows_read and (low, high) != (1, rows_read):
            raise Restage({"parts": None}, f"rows numbered {low} to {high}, but {rows_read} read (blank lines inside the file)")
    else:
        if rows_read and last - first + 1 != rows_read:
            raise RuntimeError(f"{head.path}: {rows_read} rows staged in place, but their rowids span {last - first + 1}")
        con.execute(f"update charges set row_number = rowid - {int(first or 0)} + 1 where file_id = {int(file_id)}")
    con.execute(f"""insert into _rejects select row_number, f.column_name, f.check_name, f.value, f.message
                    from (select row_number, unnest(from_json(charge_description, '{FAILURES_JSON}')) as f
                          from charges where file_id = {int(file_id)} and charge_line = {TOMBSTONE})""")
    # every line, tombstones too (as _staged in the full staging): the delivery key is read from
    # all of them, and the findings leave out rows with a reject
    con.execute(f"create or replace temp view _lines as select * from charges where file_id = {int(file_id)}")
    return int(rows_read)


def take_staged(con: duckdb.DuckDBPyConnection, file_id: int) -> int:
    """Drop the tombstones of rows staged in place under `file_id`; how many rows stay (0 when
    the file was staged in full and nothing is in charges under its id yet)."""
    con.execute(f"delete from charges where file_id = ? and charge_line = {TOMBSTONE}", [file_id])
    return int(one_row(con, "select count(*) from charges where file_id = ?", [file_id])[0])
