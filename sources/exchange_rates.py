"""Exchange rates: what converts a charge billed in one currency into the reporting currency.

Three layouts, one table (`exchange_rates`: day or month, from, to, rate, source):
- kind `exchange_rates`: a CSV `date,from,to,rate,source` (`month` in place of `date`, or a
  YYYY-MM in the date column, for a rate of the whole month: a treasury's month-end or budget rate);
  rate = units of `to` one unit of `from` buys.
- kind `ecb_eurofxref`: the ECB's euro foreign exchange reference rates as published
  (eurofxref-hist.csv, eurofxref.csv): `Date,USD,JPY,...` with a trailing comma, one row per
  TARGET working day, each cell the units of that currency one euro buys, `N/A` where the ECB
  published none (a currency it had stopped or not yet started quoting).
- kind `frb_h10`: the US Federal Reserve Board's H.10 Data Download Program CSV: five rows of
  series attributes (Series Description, Unit `Currency:_Per_EUR`, Multiplier, Currency,
  Unique Identifier), a `Time Period` row naming the series, then one row per day; `ND` where no
  rate was certified that day. A series' unit names the currency it is quoted per, its
  Currency row the currency of the value: RXI$US_N.B.EU is USD per EUR, RXI_N.B.JA JPY per USD.

A cell the publisher left without a rate (N/A, ND) is a published absence, not a row: the rows of
the file are its days. A day with no rate at all (an H.10 `ND` row: a US holiday) is a row read
and loaded as a day without a rate: counted in rows_loaded and listed in the file's totals
(`no_rate_days`), nothing in `exchange_rates`; the day rule takes the latest published day before
it, within its lookback. int_fx_rates.sql decides which rate a month uses.
"""
from __future__ import annotations

import csv
import io
from typing import Any

import duckdb

from core.errors import InputError
from core.sql import literal, one_row
from schemas.contract import reject_sql
from sources.base import Head, Reader, Staged, register
from sources.tabular import canonical_view, csv_names, csv_read, stage_sql

ALIASES: dict[str, tuple[str, ...]] = {
    "date": ("date", "month", "date_or_month", "day"),
    "from_currency": ("from", "from_currency"),
    "to_currency": ("to", "to_currency"),
    "rate": ("rate",),
    "source": ("source",),
}
REQUIRED = {"date", "from_currency", "to_currency", "rate", "source"}
ECB_SOURCE = "ECB euro foreign exchange reference rates"
H10_SOURCE = "Federal Reserve Board H.10"
# the H.10 download's attribute rows, in order, before its `Time Period` row
H10_ROWS = ("Series Description", "Unit:", "Multiplier:", "Currency:", "Unique Identifier:", "Time Period")
NO_RATE = ("N/A", "ND", "")     # what ECB and H.10 cells hold on a day without a rate


class RatesReader(Reader):
    table = "exchange_rates"
    staged = "_staged_rates"     # the staged lines holding a rate; the days without one are counted apart

    def load_long(self, con: duckdb.DuckDBPyConnection, head: Head, select: str, version: str) -> Staged:
        """Stage `select` (row_number, date_text, from_text, to_text, rate_text, source) through
        the one staging model and the table's contract."""
        con.execute(f"create or replace temp view raw_fx_rates as {select}")
        rows_read = stage_sql(con, head.path, "stg_fx__rates.sql")
        con.execute(f"create or replace temp view {self.staged} as select * from _staged where not no_rate")
        from schemas.exchange_rates import ExchangeRates  # pandera and pandas: imported when a file is staged
        sql = reject_sql(ExchangeRates, {r[0] for r in con.execute("describe _staged").fetchall()},
                         f"(select * from {self.staged} where len(_errors) = 0)")
        if sql:
            con.execute(sql)
        return Staged(rows_read=rows_read, format_version=version)

    def load(self, con: duckdb.DuckDBPyConnection, file_id: int) -> int:
        """The rates, plus the days the publisher gave none: rows read, neither rates nor rejects."""
        return super().load(con, file_id) + len(no_rate_days(con))

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        n, pairs, first, last = one_row(con, """
            select count(*), list(distinct from_currency || '->' || to_currency order by 1),
                   min(rate_month), max(rate_month)
            from exchange_rates where file_id = ?""", [file_id])
        return {"rates": n, "pairs": pairs or [], "first_month": first, "last_month": last,
                "no_rate_days": no_rate_days(con)}


@register
class ExchangeRatesReader(RatesReader):
    kind = "exchange_rates"
    description = "exchange rates (CSV: date or month, from, to, rate, source)"

    def sniff(self, head: Head) -> str | None:
        lower = {n.lower() for n in csv_names(head)} if not head.parquet else set()
        has_date = bool(lower & {"date", "month", "date_or_month", "day"})
        return "1" if has_date and {"from", "to", "rate", "source"} <= lower else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        canonical_view(con, head, ALIASES, REQUIRED, "raw_fx_wide")
        return self.load_long(con, head, """select row_number, date as date_text, from_currency as from_text,
            to_currency as to_text, rate as rate_text, source from raw_fx_wide""", "1")


@register
class EcbReader(RatesReader):
    kind = "ecb_eurofxref"
    description = "ECB euro foreign exchange reference rates (eurofxref-hist.csv: Date,USD,JPY,...)"

    def sniff(self, head: Head) -> str | None:
        names = csv_names(head)
        codes = names[1:]
        ok = bool(names) and names[0] == "Date" and codes and all(len(c) == 3 and c.isalpha() and c.isupper() for c in codes)
        return "eurofxref" if ok else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        codes = csv_names(head)[1:]
        cells = ", ".join(f"{{'to_text': {literal(c)}, 'rate_text': c{i}}}" for i, c in enumerate(codes, 1))
        # every day with at least one rate gives one line per rate; a day without any keeps one
        # line without a rate, so the staging model rejects it where it is
        select = f"""
            with days as (select row_number() over () as row_number, * from {csv_read(head, padded=True)}),
            cells as (select row_number, c0, unnest([{cells}]) as cell from days)
            select row_number, c0 as date_text, 'EUR' as from_text, cell.to_text, cell.rate_text,
                {literal(ECB_SOURCE)} as source
            from cells
            where coalesce(trim(cell.rate_text), '') not in {no_rate_sql()}
            union all
            select row_number, c0, 'EUR', null, null, {literal(ECB_SOURCE)}
            from days where {no_rate_anywhere(len(codes))}"""
        return self.load_long(con, head, select, "eurofxref")


@register
class H10Reader(RatesReader):
    kind = "frb_h10"
    description = "Federal Reserve Board H.10 exchange rates (Data Download Program CSV)"

    def sniff(self, head: Head) -> str | None:
        return "ddp-csv" if head.columns[:1] == ("Series Description",) else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        series = h10_series(head)
        cells = ", ".join(f"{{'from_text': {literal(f)}, 'to_text': {literal(t)}, 'mult': {literal(m)}, "
                          f"'series': {literal(s)}, 'rate_text': c{i}}}" for i, (f, t, m, s) in enumerate(series, 1))
        width = len(series) + 1
        cols = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(width))
        read = (f"read_csv({literal(str(head.path))}, header = false, skip = {len(H10_ROWS)}, auto_detect = false, "
                f"columns = {{{cols}}}, delim = ',', quote = '\"', escape = '\"', null_padding = true, "
                f"compression = '{'gzip' if head.gzip else 'none'}')")
        select = f"""
            with days as (select row_number() over () as row_number, * from {read}),
            cells as (select row_number, c0, unnest([{cells}]) as cell from days)
            select row_number, c0 as date_text, cell.from_text, cell.to_text,
                -- the Multiplier row scales every value of its series (1 for the H.10 rates)
                (try_cast(cell.rate_text as decimal(38, 12)) * try_cast(cell.mult as decimal(38, 12)))::varchar as rate_text,
                {literal(H10_SOURCE)} || ', series ' || cell.series as source
            from cells
            where coalesce(trim(cell.rate_text), '') not in {no_rate_sql()}
            union all
            select row_number, c0, null, null, null, {literal(H10_SOURCE)}
            from days where {no_rate_anywhere(len(series))}"""
        return self.load_long(con, head, select, "ddp-csv")


def no_rate_days(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The staged file's days without any rate (a holiday) that pass every check, as YYYY-MM-DD."""
    return [r[0] for r in con.execute("""
        select coalesce(strftime(min(rate_date), '%Y-%m-%d'), min(rate_month)) from _staged s
        where no_rate and not exists (select 1 from _rejects r where r.row_number = s.row_number)
        group by row_number order by 1""").fetchall()]


def no_rate_sql() -> str:
    return "(" + ", ".join(literal(v) for v in NO_RATE) + ")"


def no_rate_anywhere(n: int) -> str:
    """SQL: true for a day whose cells c1..cn hold no rate at all."""
    return " and ".join(f"coalesce(trim(c{i}), '') in {no_rate_sql()}" for i in range(1, n + 1))


def h10_series(head: Head) -> list[tuple[str, str, str, str]]:
    """(from, to, multiplier, series id) of each column of an H.10 download, from its attribute
    rows: `Currency:_Per_EUR` names the currency quoted per (from), the Currency row the value's (to)."""
    rows = list(csv.reader(io.StringIO(head.text, newline="")))[:len(H10_ROWS)]
    labels = tuple(r[0].strip() if r else "" for r in rows)
    if labels != H10_ROWS:
        raise InputError(head.path, "not the H.10 download layout", f"first column of rows 1-6: {', '.join(labels)}",
                         f"Download the CSV again from the Data Download Program; its rows start {', '.join(H10_ROWS)}")
    unit, mult, currency, ids = rows[1][1:], rows[2][1:], rows[3][1:], rows[5][1:]
    out = []
    for i, (u, m, c, s) in enumerate(zip(unit, mult, currency, ids), 2):
        per = u.strip().rpartition("_Per_")[2].upper()
        if not (u.strip().startswith("Currency:") and len(per) == 3 and per.isalpha() and len(c.strip()) == 3):
            raise InputError(head.path, f"series {s.strip() or i} is not an exchange rate", f"column {i}: unit {u.strip()!r}, currency {c.strip()!r}",
                             "Download only the H.10 exchange-rate series (units Currency:_Per_XXX), not the dollar indexes")
        out.append((per, c.strip().upper(), m.strip() or "1", s.strip()))
    if not out:
        raise InputError(head.path, "no series", "row 6 names none", "Download at least one H.10 series")
    return out
