"""What every billing reader shares: GPU resolution from the instance catalog, the charges
contract, totals and the delivery key."""
from __future__ import annotations

from typing import Any, Sequence

import duckdb
import pyarrow as pa  # type: ignore[import-untyped]

from core.sql import literal, one_row, read_sql
from core.text import team_name
from core.units import S_PER_H
from schemas.contract import reject_sql
from sources.base import Head, Reader, Staged
from sources.billing_in_place import stage_in_place, take_staged
from sources.linecount import LineCount
from sources.reference_data import read_rows
from sources.tabular import move_failures, source_name, stage_sql, stage_view, tabular_dialect, tabular_expected_rows
from sources.text_parts import TextParts

# Units a cloud uses for instance time; only these rows carry GPU-hours. A GPU instance line in
# minutes or seconds is read in hours with a note; in any other unit it is a reject.
HOUR_UNITS = ("hours", "hour", "hrs", "hr", "h")
MINUTE_UNITS = ("minutes", "minute", "mins", "min")
SECOND_UNITS = ("seconds", "second", "secs", "sec", "s")
S_PER_MIN = 60.0    # a definition, not a coefficient
# Line items that are not instance time: AWS savings-plan negations restate covered usage;
# Azure unused reservation/savings-plan rows are paid-for hours nobody ran.
NOT_CAPACITY = ("SavingsPlanNegation", "UnusedReservation", "UnusedSavingsPlan")


class BillingReader(Reader):
    table = "charges"
    staged = "_lines"    # _staged joined to the instance catalog (a view: no second copy of the rows)
    # Stage one-line-per-row models straight into charges (sources/billing_in_place.py)
    in_place = False
    # The reader's canonical names and their spellings, and the charges columns a line check may
    # name -> the canonical names they are read from (the first the file has): a located failure
    # names the export's own column (line_names).
    aliases: dict[str, tuple[str, ...]] = {}
    line_columns: dict[str, tuple[str, ...]] = {}
    localised = False    # headers may carry their English name in parentheses (tabular.english_name)

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        # options["padded"]: the runner's second read after ShortRows (a row shorter than the header)
        return self.stage_rows(con, head, options, bool(options.get("padded")))

    def stage_rows(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any], padded: bool) -> Staged:  # pragma: no cover
        raise NotImplementedError

    def stages_in_place(self, head: Head, options: dict[str, Any]) -> bool:
        """Whether this staging writes the lines straight into charges (a padded read notes its
        short rows, and options["full"] is the runner's staging after Restage: both go the full
        way). The runner then hashes the file, cuts a CSV into parts and allots the file's id
        before staging (options "file_id", "parts")."""
        return self.in_place and not options.get("padded") and not options.get("full")

    def parts(self, head: Head, options: dict[str, Any]) -> TextParts | None:
        """The CSV's parts to read, when this staging is in place and the runner cuts the file."""
        in_place = self.stages_in_place(head, options) and options.get("file_id") is not None
        return options.get("parts") if in_place else None

    def stage_lines(self, con: duckdb.DuckDBPyConnection, head: Head, sql_name: str, slots: dict[str, str] | None,
                    options: dict[str, Any], version: str) -> Staged:
        """Stage a model yielding one line per source row, numbered when read as parts or from
        Parquet, else in file order without numbers: in place when the reader allows it."""
        if self.stages_in_place(head, options) and options.get("file_id") is not None:
            stage_view(con, head.path, sql_name, slots)
            resolve_gpus(con, names=self.line_names(head))
            parts = self.parts(head, options)
            rows = stage_in_place(con, head, options["file_id"], numbered=parts is not None or head.parquet, parts=parts)
            return self.finish(con, head, rows, version, in_place=True)
        return self.finish(con, head, stage_sql(con, head.path, sql_name, slots, rowid_numbers=True), version)

    def line_names(self, head: Head) -> dict[str, str]:
        """charges column -> the file's own name of the column it is read from (line_columns)."""
        names = {}
        for column, keys in self.line_columns.items():
            found = (source_name(head.columns, self.aliases[k], self.localised) for k in keys)
            names[column] = next((n for n in found if n is not None), self.aliases[keys[0]][0])
        return names

    def dialect(self, head: Head) -> str | None:
        return tabular_dialect(head)

    def expected_rows(self, con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None, staged: Staged) -> int | None:
        return tabular_expected_rows(con, head, count)

    def finish(self, con: duckdb.DuckDBPyConnection, head: Head, rows_read: int, version: str, in_place: bool = False) -> Staged:
        """Rejects by the contract, the delivery key and the findings of the staged lines. Rows
        staged in place were checked on their way in; _lines is then those rows, in charges."""
        if not in_place:
            resolve_gpus(con, file_currency(con), self.line_names(head))
            move_failures(con, "_lines", "_line_errors", "_line_notes")
        cols = {r[0] for r in con.execute("describe _lines").fetchall()}
        from schemas.charges import Charges  # pandera and pandas: imported when a file is staged
        sql = "" if in_place else reject_sql(Charges, cols, "_lines")
        if sql:
            con.execute(sql)
        # distinct pairs first, formatted after: one month of CUR is tens of millions of lines
        keys = one_row(con, f"""
            select string_agg(distinct coalesce(billing_account_id, '?') || '@' || coalesce(strftime(billing_period_start, '%Y-%m'), '?'), ',' order by 1)
            from (select distinct billing_account_id, billing_period_start from {"_lines" if in_place else "_staged"})""")[0]
        # in place, no key is repeated (stage_in_place checked their hashes)
        fold_tag_values(con)
        con.execute("create or replace temp table _findings as " + findings_sql(cols))
        return Staged(rows_read=rows_read, format_version=version, delivery_key=keys)

    def load(self, con: duckdb.DuckDBPyConnection, file_id: int) -> int:
        # Rows staged in place are in charges already and only take the file's id. (A file staged
        # in place whose every row was rejected moves none, and its _lines are then empty.)
        n = take_staged(con, file_id) or super().load(con, file_id)
        con.execute("insert into findings select ?, * from _findings", [file_id])
        return n

    def remove(self, con: duckdb.DuckDBPyConnection, file_id: int) -> None:
        super().remove(con, file_id)
        con.execute("delete from findings where file_id = ?", [file_id])

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        rows = con.execute("""
            select billing_currency, sum(billed_cost), sum(effective_cost), sum(list_cost), sum(gpu_hours)
            from charges where file_id = ? group by all order by 1""", [file_id]).fetchall()
        found = {f: n for f, n in con.execute("select finding, rows from findings where file_id = ?", [file_id]).fetchall()}
        return currency_totals(rows, found)


def currency_totals(rows: Sequence[Sequence[Any]], found: dict[str, int]) -> dict[str, Any]:
    """A billing file's totals from its (currency, billed, effective, list cost, GPU-hours) sums,
    one row per currency, and its findings by name; both engines record them."""
    if not rows:
        return {"billed_cost": 0.0, "effective_cost": 0.0, "list_cost": 0.0, "currency": None, "gpu_hours": 0.0}
    # One currency is the norm; several are reported per currency rather than added up.
    by_cur = {cur: {"billed_cost": float(b or 0), "effective_cost": float(e or 0), "list_cost": float(lc or 0),
                    "gpu_hours": float(g or 0)} for cur, b, e, lc, g in rows}
    if len(by_cur) == 1:
        (cur, t), = by_cur.items()
        return {**t, "currency": cur, "findings": found}
    return {"currency": "mixed", "by_currency": by_cur, "findings": found}


def file_currency(con: duckdb.DuckDBPyConnection) -> str | None:
    """The currency for rows that leave it blank (OCI writes none on zero-cost rows): the one
    currency the file's other rows name, with a located finding per row; None when the file
    names none or several (those rows are then rejects: a cost must carry its currency)."""
    blank = one_row(con, "select count(*) from _staged where billing_currency is null")[0]
    if not blank:
        return None
    named = con.execute("select distinct billing_currency from _staged where billing_currency is not null").fetchall()
    if len(named) != 1:
        return None
    con.execute("""insert into _row_findings
                   select row_number, 'billing_currency', 'currency_from_file', ?,
                          'currency cell is empty; the currency of the file''s other rows is used'
                   from _staged where billing_currency is null""", [named[0][0]])
    return named[0][0]


# The distinct tag values of _lines outside ASCII: the only ones NFKC can change.
TAG_VALUES_SQL = ("select distinct raw from (select unnest(map_values(tags)) as raw from _lines) "
                  "where regexp_matches(raw, '[^\\x00-\\x7f]')")


def tag_folds(raws: list[str]) -> list[tuple[str, str | None]]:
    """Each value with the team it names (core.text.team_name; NFKC is in no SQL engine): the
    rows of _tag_folds, which the findings' folded-tag check reads, on either engine."""
    return [(r, team_name(r)) for r in raws]


def fold_tag_values(con: duckdb.DuckDBPyConnection) -> None:
    """Temp table _tag_folds over _lines (tag_folds)."""
    pairs = tag_folds([r for (r,) in con.execute(TAG_VALUES_SQL).fetchall()])
    folds = pa.table({"raw": pa.array([r for r, _ in pairs], pa.string()), "team": pa.array([t for _, t in pairs], pa.string())})
    con.register("_tag_folds_in", folds)
    con.execute("create or replace temp table _tag_folds as select * from _tag_folds_in")
    con.unregister("_tag_folds_in")


def findings_sql(cols: set[str]) -> str:
    """stg_billing__findings over _lines, keyed by line_item_key where the format has one."""
    key = "line_item_key" if "line_item_key" in cols else "null::varchar"
    return read_sql("10_staging", "stg_billing__findings.sql", line_item_key=key)


def resolve_gpus(con: duckdb.DuckDBPyConnection, currency: str | None = None, names: dict[str, str] | None = None) -> None:
    """View _lines: the staged rows with gpu_model, gpu_count and gpu_hours from the instance
    catalog, and blank currencies filled with `currency` when given (`names`: see lines_sql).

    The catalog is looked up as a MAP, not joined: rows staged in place are numbered by the
    order they are written in, and a join emits rows out of file order (sources.tabular.file_order)."""
    catalog = con.execute("select lower(instance_type), gpu_model, gpu_count from ref_instance_types order by 1").fetchall()
    entries = ", ".join(f"{literal(t)}: {{'gpu_model': {literal(m) if m is not None else 'null::varchar'}, "
                        f"'gpu_count': {'null' if n is None else repr(float(n))}::double}}" for t, m, n in catalog)
    con.execute(f"create or replace temp macro gpu_of(instance_type) as map {{{entries}}}[instance_type]"
                if catalog else "create or replace temp macro gpu_of(instance_type) as "
                "null::struct(gpu_model varchar, gpu_count double)")
    # the line item key as a BIGINT (62 bits, never negative), kept with the line: repeats are
    # found by one integer group-by, then compared on the keys themselves
    key = ", (hash(line_item_key) >> 2)::bigint as line_item_hash" if "line_item_key" in staged_columns(con) else ""
    con.execute(f"create or replace temp view _lines as select *{key} from ({lines_sql(currency, by_macro=True, names=names)})")


def staged_columns(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("describe _staged").fetchall()}


def lines_sql(currency: str | None = None, by_macro: bool = False, names: dict[str, str] | None = None) -> str:
    """The select of resolve_gpus over _staged: the catalog by the gpu_of macro (DuckDB, file
    order kept) or by a join (the Spark engine, whose rows are numbered before). Beside the
    staged columns: gpu_model, gpu_count, gpu_hours, and the checks only a resolved line allows
    (line_checks_sql) as _line_errors and _line_notes, naming columns as `names` says
    (BillingReader.line_names; a column it lacks by its charges name)."""
    fill = f"replace (coalesce(s.billing_currency, {literal(currency)}) as billing_currency)" if currency else ""
    gpu = "_gpu" if by_macro else "it"
    line = f"({gpu}.gpu_count is not null and s.charge_category = 'Usage' and coalesce(s.line_item_type, '') not in ({quoted(NOT_CAPACITY)}))"
    per_h = units_per_hour_sql("s.consumed_unit")
    errors, notes = line_checks_sql(line, per_h, names or {})
    columns = f"""{gpu}.gpu_model as gpu_model,
            {gpu}.gpu_count as gpu_count,
            case when {line} then s.consumed_quantity / {per_h} * {gpu}.gpu_count end as gpu_hours,
            {errors} as _line_errors,
            {notes} as _line_notes"""
    if by_macro:
        return f"""
        select s.* exclude (_gpu), {columns}
        from (select s.* {fill}, gpu_of(s.instance_type) as _gpu from _staged s) s"""
    return f"""
        select s.* {fill}, {columns}
        from _staged s
        left join ref_instance_types it on lower(it.instance_type) = s.instance_type"""


def quoted(values: tuple[str, ...]) -> str:
    return ", ".join(literal(v) for v in values)


def units_per_hour_sql(unit: str) -> str:
    """How many of `unit` make an hour (1 for hours), null where it is not a unit of time."""
    u = f"lower(trim({unit}))"
    return (f"case when {u} in ({quoted(HOUR_UNITS)}) then 1.0 when {u} in ({quoted(MINUTE_UNITS)}) then {S_PER_H / S_PER_MIN!r} "
            f"when {u} in ({quoted(SECOND_UNITS)}) then {S_PER_H!r} end")


def billing_limit(limit_id: str) -> float:
    """A value of sources/reference/billing_limits.csv."""
    return next(float(r["value"]) for r in read_rows("billing_limits") if r["limit_id"] == limit_id)


def failure(column: str, check: str, value: str, message: str) -> str:
    """One _rejects / _row_findings struct (the staging models' shape) as SQL."""
    return (f"{{'column_name': {literal(column)}, 'check_name': {literal(check)}, 'value': left(cast({value} as varchar), 200), "
            f"'message': {literal(message)}}}")


def within(column: str, limit_id: str, name: str) -> str:
    """A located failure (named `name`) where |column| passes its billing limit (NaN and
    infinities too)."""
    limit = billing_limit(limit_id)
    return (f"case when not (abs(s.{column}) <= {limit!r}) then "
            + failure(name, "within_billing_limit", f"s.{column}",
                      f"{name} is beyond +-{limit:g}, more than a billing line can hold "
                      f"(sources/reference/billing_limits.csv {limit_id})") + " end")


def line_checks_sql(gpu_line: str, per_h: str, names: dict[str, str]) -> tuple[str, str]:
    """The checks of a staged line that every billing format shares, as two lists of located
    failures: errors (the row is a reject) and notes (it loads, noted).

    Amounts and quantities are held within sources/reference/billing_limits.csv, so that what
    ingest accepts can be summed and divided in the warehouse's DECIMAL(38, 12) without overflow;
    a charge period cannot end before it starts; a GPU instance line's usage is instance time
    (GPU-hours are made of it): minutes and seconds are converted with a note, another unit is a
    reject, and its hours are held to a limit too. A line with no unit at all (a layout without
    the column, a short row) gives no GPU-hours, as before: what its quantity counts is unknown."""
    hours = f"s.consumed_quantity / {per_h}"
    hours_limit = billing_limit("gpu_line_hours_max")

    def name(column: str) -> str:
        return names.get(column, column)

    errors = [within(c, "cost_abs_max", name(c)) for c in ("billed_cost", "effective_cost", "list_cost")] + [
        within("consumed_quantity", "quantity_abs_max", name("consumed_quantity")),
        "case when s.charge_period_end < s.charge_period_start then "
        + failure(name("charge_period_end"), "period_end_not_before_start", "s.charge_period_end",
                  "the charge period ends before it starts") + " end",
        f"case when {gpu_line} and s.consumed_quantity is not null and s.consumed_unit is not null and {per_h} is null then "
        + failure(name("consumed_unit"), "gpu_usage_in_time", "s.consumed_unit",
                  "a GPU instance line's usage must be instance time (hours, minutes or seconds) to give GPU-hours") + " end",
        f"case when {gpu_line} and not (abs({hours}) <= {hours_limit!r}) then "
        + failure(name("consumed_quantity"), "within_billing_limit", hours,
                  f"a GPU instance line of more than {hours_limit:g} hours "
                  "(sources/reference/billing_limits.csv gpu_line_hours_max)") + " end",
    ]
    notes = [f"case when {gpu_line} and s.consumed_quantity is not null and {per_h} > 1 then "
             + failure(name("consumed_unit"), "gpu_usage_converted_to_hours", "s.consumed_unit",
                       "GPU instance usage in minutes or seconds, converted to hours for its GPU-hours") + " end"]
    return f"errors([{', '.join(errors)}])", f"errors([{', '.join(notes)}])"
