"""Telemetry exported from Prometheus-compatible stores: the HTTP API's query_range JSON (a
matrix saved to a file) and long CSV (timestamp, metric, labels..., value) as Grafana or
VictoriaMetrics export it. Both become the same samples as dcgm-exporter text."""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Any

import duckdb

from core.errors import InputError
from core.sql import fill, literal, sql_text
from sources.base import Head, Restage, Staged, register
from sources.linecount import LineCount
from sources.tabular import csv_names, csv_read, tabular_dialect, tabular_expected_rows
from sources.telemetry import GROUP_SLOTS, TYPED_READ_FAILS, TelemetryReader, label_value

TIME_COLUMNS = ("timestamp", "time", "Time", "_time", "ts")
METRIC_COLUMNS = ("__name__", "metric", "name", "Metric")
VALUE_COLUMNS = ("value", "Value", "_value")


def first_present(cols: tuple[str, ...], options: tuple[str, ...]) -> str | None:
    return next((c for c in options if c in cols), None)


def long_columns(cols: tuple[str, ...]) -> tuple[str, str, str] | None:
    """The long CSV's time, metric and value columns, or None when one of them is missing."""
    time_c, metric_c, value_c = (first_present(cols, o) for o in (TIME_COLUMNS, METRIC_COLUMNS, VALUE_COLUMNS))
    return (time_c, metric_c, value_c) if time_c and metric_c and value_c else None


@dataclass(frozen=True)
class LongLayout:
    """Where a long CSV keeps its time, metric and value (positions of c0..cN; a repeated name
    is its first column), and its labels: every other column, by name and position."""
    time: int
    metric: int
    value: int
    labels: tuple[str, ...]
    label_positions: tuple[int, ...]

    def key_select(self) -> str:
        """The series keys under fixed names, k0 the metric and k1.. the labels (a label called
        `line` or `series` must not collide with a view's own columns), as the cells are written."""
        return ", ".join(f"c{p} as k{i}" for i, p in enumerate((self.metric, *self.label_positions)))


def long_layout(head: Head) -> LongLayout | None:
    """The layout of a long CSV's header, or None when it has no time, metric or value column."""
    cols = csv_names(head)
    if (found := long_columns(cols)) is None:
        return None
    first = {c: i for i, c in reversed(list(enumerate(cols)))}
    labels = tuple(c for c in cols if c not in found)
    return LongLayout(first[found[0]], first[found[1]], first[found[2]], labels, tuple(first[c] for c in labels))


@register
class PromRangeReader(TelemetryReader):
    kind = "prom-range"
    description = "Prometheus HTTP API query_range result (matrix JSON)"

    def sniff(self, head: Head) -> str | None:
        t = head.text.lstrip()[:4096]
        if t.startswith("{") and '"resultType"' in t and '"matrix"' in t:
            return "api-v1-matrix"
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        self.prepare(con)
        # Label keys differ per series, so metric is read as a MAP; [time, "value"] pairs as JSON.
        # The whole response is one JSON object: let DuckDB buffer the file, not a fixed 1 GB.
        max_object = head.path.stat().st_size + (1 << 20)
        con.execute(f"""
            create or replace temp view raw_prom_range as
            select unnest(data.result) as r
            from read_json({literal(str(head.path))}, format = 'auto', maximum_object_size = {max_object},
                           columns = {{'data': 'STRUCT(resultType VARCHAR, result STRUCT(metric MAP(VARCHAR, VARCHAR), "values" JSON[])[])'}})""")
        self.sample_views(con, "stg_prom_range__samples.sql", sql_text("10_staging", "stg_prom_range__samples.sql"))
        rows_read, _ = self.group(con, head)
        return Staged(rows_read=rows_read, format_version="api-v1-matrix")


@register
class PromCsvReader(TelemetryReader):
    kind = "prom-csv"
    description = "long CSV of samples (timestamp, metric, labels..., value)"
    typed_read = True     # tests turn it off to hold the typed view to the text view

    def sniff(self, head: Head) -> str | None:
        cols = head.columns
        if long_columns(cols) and ("DCGM_FI_" in head.text or "dcgm_" in head.text):
            return "long-csv"
        return None

    def dialect(self, head: Head) -> str | None:
        return tabular_dialect(head)

    def expected_rows(self, con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None, staged: Staged) -> int | None:
        return tabular_expected_rows(con, head, count)

    def samples_sql(self, head: Head, src: str, carried: str = "") -> tuple[str, dict[str, str]]:
        """The samples of the CSV read by relation `src` (text columns c0..cN by position) and
        the series keys; `{{ row_number }}` is left for the caller (null, or the row's number).
        carried: more columns of `src` kept on every sample, each after a comma (a batch: `, filename`)."""
        layout = long_layout(head)
        if layout is None:   # detect() sniffed this header, so only a direct call gets here
            raise InputError(head.path, "not a long CSV", "no time, metric or value column", "Pass the --kind this file is")
        # Every other column is a label, rebuilt as Prometheus label text so one parser serves all.
        # Header names enter SQL only as escaped literals and quoted identifiers.
        # A cell is written escaped, as the exposition format writes a label value (the label
        # parser decodes it): a quote or backslash in a cell stays the cell's.
        parts = ", ".join(f"case when nullif(k{i}, '') is not null then {literal(c + '=' + chr(34))} || {label_value(f'k{i}')} || '\"' end"
                          for i, c in enumerate(layout.labels, 1))
        labels = f"concat_ws(',', {parts})" if layout.labels else "''"
        # Grouped on the columns themselves: the label text is built once per series and hour,
        # not once per sample (half the cost of the pass when it was). The keys are the cells as
        # written ('' and NULL part the same rows): '' becomes NULL once per group, in `metric`
        # and `labels`, instead of in seven CASEs per sample.
        keys = {**GROUP_SLOTS, "samples": "_tel_samples", "keys": ", ".join(f"k{i}" for i in range(len(layout.labels) + 1)),
                "value": "try_cast(value_text as double)", "metric": "nullif(k0, '')", "labels": labels, "carried": carried}
        # '' cells as NULL
        t, m, v = (f"nullif(c{i}, '')" for i in (layout.time, layout.metric, layout.value))
        sql = f"""
            select *, k0 || '{{' || {labels} as series from (
            select
                row_number,
                {layout.key_select()},
                {v} as value_text,
                -- a CASE, not coalesce(): DuckDB evaluated the epoch-number fallback on every
                -- row (a third of the pass for a file of ISO times)
                -- a number past what milliseconds hold is NULL (a rejected sample), not an error
                case when utc_ts({t}) is not null then epoch_ms(utc_ts({t}))
                     else try_cast(case when try_cast({t} as double) < 1e11 then try_cast({t} as double) * 1000
                                        else try_cast({t} as double) end as bigint) end as ts_ms,
                left(concat_ws(',', {t}, {m}, {v}), 200) as line{carried}
            from (select {{{{ row_number }}}} as row_number, * from {src}))"""
        return sql, keys

    def typed_samples_sql(self, head: Head, keys: dict[str, str], also: tuple[Head, ...] = ()) -> tuple[str, dict[str, str]] | None:
        """The samples with the time and value typed by DuckDB's CSV parser, and the slots to group
        them by; None unless every whole record of the head has its time in one of TYPED_TIMES
        and a number for its value.

        Parsing both in the reader costs about a tenth of the pass less than casting the text
        (issue 24). A cell the parser takes gives what the text view gives for it (utc_ts tries
        the same format first; try_cast and the parser read the same numbers; a test holds the
        two views to the same groups); a cell it cannot parse fails the read, and the file is
        staged again through the text view (TelemetryReader.group's restage). `also`: the
        other files of a batch, of the same header (batch_key)."""
        layout = long_layout(head)
        fmt = None if layout is None else typed_time_format(head, layout.time, layout.value)
        if layout is None or fmt is None:
            return None
        src = csv_read(head, types={layout.time: "TIMESTAMP", layout.value: "DOUBLE"}, timestamp_format=fmt, sniffed=True, also=also)
        sql = f"select {layout.key_select()}, c{layout.value} as value_num, epoch_ms(c{layout.time}) as ts_ms{keys.get('carried', '')} from {src}"
        return sql, {**keys, "samples": "_tel_samples_typed", "value": "value_num"}

    def batch_key(self, head: Head) -> tuple | None:
        """Files of one header, header length, compression and time spelling share a batch."""
        layout = long_layout(head)
        if layout is None or head.parquet:
            return None
        return (csv_names(head), head.header_lines, head.gzip, typed_time_format(head, layout.time, layout.value))

    def batch_samples(self, con: duckdb.DuckDBPyConnection, heads: list[Head]) -> tuple[dict[str, str], str | None]:
        """Every file of the batch in one read (typed where the first file's head allows it: a
        cell the typed read cannot parse sends the batch back to each file's own staging)."""
        head, also = heads[0], tuple(heads[1:])
        sql, keys = self.samples_sql(head, csv_read(head, also=also), carried=", filename")
        typed = self.typed_samples_sql(head, keys, also=also) if self.typed_read else None
        if typed is None:
            con.execute("create or replace temp view _tel_samples as " + fill("long-csv samples", sql, {"row_number": "null::bigint"}))
            return keys, None
        con.execute("create or replace temp view _tel_samples_typed as " + typed[0])
        return typed[1], None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        self.prepare(con)
        # dialect stated, columns by position (sources/tabular.py csv_read); padded after a row
        # came short (ShortRows): its missing cells are NULL, and the row a located reject
        padded = bool(options.get("padded"))
        sql, keys = self.samples_sql(head, csv_read(head, padded))
        self.sample_views(con, "long-csv samples", sql)
        text = options.get("text_read") or padded or not self.typed_read
        typed = None if text else self.typed_samples_sql(head, keys)
        if typed is None:
            rows_read, _ = self.group(con, head, keys)
        else:
            try:    # binding the view runs the sniffer (csv_read's `sniffed`)
                con.execute("create or replace temp view _tel_samples_typed as " + typed[0])
            except TYPED_READ_FAILS:
                raise Restage({"text_read": True}, "a sample the typed read's sniffer could not read") from None
            rows_read, _ = self.group(con, head, typed[1], restage={"text_read": True})
        return Staged(rows_read=rows_read, format_version="long-csv")


# Time spellings the typed read takes, as a head's cell shows each and as the strptime format
# utc_ts() tries first for it (pipelines/sql/00_warehouse/macros.sql).
TYPED_TIMES = (
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "%Y-%m-%dT%H:%M:%SZ"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"), "%Y-%m-%dT%H:%M:%S.%gZ"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), "%Y-%m-%d %H:%M:%S"),
)


def typed_time_format(head: Head, time_i: int, value_i: int) -> str | None:
    """The one TYPED_TIMES format of every whole data record in the head, when each also has a
    number for its value; else None. Only a guess for the whole file: a later cell that does not
    parse costs a second staging, never a different result."""
    try:
        records = list(csv.reader(io.StringIO(head.text)))[1:]
    except csv.Error:       # a cell past the csv module's field limit, say: the text read decides
        return None
    if not head.text.endswith("\n"):
        records = records[:-1]     # the head's last record may be cut short
    if not records or any(len(r) <= max(time_i, value_i) for r in records):
        return None
    fmt = next((f for pattern, f in TYPED_TIMES if all(pattern.fullmatch(r[time_i]) for r in records)), None)
    try:
        for r in records:
            float(r[value_i])
    except ValueError:
        return None
    return fmt
