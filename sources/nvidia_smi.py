"""`nvidia-smi --query-gpu=... --format=csv -l N` logs, and what the three nvidia-smi readers
(this one, sources/nvidia_smi_dmon.py, sources/nvidia_smi_exporter.py) share.

A log is nvidia-smi's CSV written to a file: a header (`timestamp, uuid, power.draw [W]`) unless
`noheader`, then one line per GPU and sample, values between `, ` without quotes, units inside
values unless `nounits` (`345.12 W`, `87 %`), `[N/A]` or `[Not Supported]` where there is no
reading. Of its columns only those sources/nvidia_smi_fields.csv names are read (power, energy
counter, utilisation): one row per line and such column. A noheader log needs the field list it
was written with (--query-gpu). Timestamps are the machine's local time: --timezone, else UTC
(said in a note).

Every reader lists its cells (metric, labels, text as written) for stg_nvidia_smi__checks.sql,
which strips units and rejects a cell with no reading, no number or a value out of the field's
range (located, with its line); the rest go to the telemetry staging every reader shares
(sources/telemetry.py), so energy comes from the same tiers: counter differences where a
counter is read, power integrated over time otherwise.
"""
from __future__ import annotations

import csv
import gzip
import re
import zoneinfo
from dataclasses import dataclass
from importlib.resources import files
from typing import IO, Any

import duckdb

from core.errors import InputError
from core.sql import fill, literal, one_row, read_sql, sql_text
from sources.base import Head, Staged, register
from sources.telemetry import TelemetryReader

FIELDS_CSV = files("sources") / "nvidia_smi_fields.csv"
# nvidia-smi's timestamp: "YYYY/MM/DD HH:MM:SS.msec" (--help-query-gpu "timestamp")
TIMESTAMP = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$")
HEADER_UNIT = re.compile(r"^(?P<name>[^\[]+?)\s*\[(?P<unit>[^\]]*)\]$")
# Identity columns, under each name --query-gpu accepts for them (--help-query-gpu).
ID_NAMES = {"timestamp": ("timestamp",), "uuid": ("uuid", "gpu_uuid"), "index": ("index",),
            "name": ("name", "gpu_name"), "host": ("hostname",), "mig": ("mig.mode.current",)}


@dataclass(frozen=True)
class Field:
    """A column read: where it is (1-based), the series metric it becomes, its unit."""
    i: int
    column: str
    metric: str
    unit: str


def text_lines(head: Head) -> IO[str]:
    """The file's lines as the staging reads them: gzip undone, a BOM dropped."""
    if head.gzip:
        return gzip.open(head.path, "rt", encoding="utf-8-sig", errors="replace", newline="")
    return open(head.path, encoding="utf-8-sig", errors="replace", newline="")


def field_rows(fmt: str) -> list[dict[str, str]]:
    with FIELDS_CSV.open("r", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["format"] == fmt]


def pick_fields(fmt: str, names: list[str]) -> list[Field]:
    """The columns of `names` read: per canonical field, the best-ranked one present, so one
    GPU's power is never read twice (power.draw and power.draw.average side by side)."""
    best: dict[str, tuple[int, Field]] = {}
    for r in field_rows(fmt):
        if r["name"] in names and (r["field"] not in best or int(r["rank"]) < best[r["field"]][0]):
            best[r["field"]] = (int(r["rank"]), Field(names.index(r["name"]) + 1, r["name"], r["metric"], r["unit"]))
    return sorted((f for _, f in best.values()), key=lambda f: f.i)


class NvidiaSmiReader(TelemetryReader):
    """The staging the three nvidia-smi readers share: cells -> checks -> telemetry groups."""

    def prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        super().prepare(con)
        # one row per metric: a metric read from several formats (the exporter's and query-gpu's
        # power) must join one field, or its groups would double
        con.execute("""insert into dcgm_fields by name
                       select metric as field_name, any_value(field) as field, any_value(unit) as unit,
                              any_value(to_canonical::double) as to_canonical, any_value(source) as source,
                              any_value(notes) as notes
                       from read_csv(?, header = true, all_varchar = true) group by metric""", [str(FIELDS_CSV)])
        con.execute("""create or replace temp table _nvsmi_limits as
                       select metric, any_value(low) as low, any_value(high) as high
                       from read_csv(?, header = true, all_varchar = true) group by metric""", [str(FIELDS_CSV)])

    def lines_view(self, con: duckdb.DuckDBPyConnection, head: Head) -> None:
        """raw_nvsmi_lines(line_no, line): the file's lines as written, numbered in order."""
        con.execute(f"""create or replace temp view raw_nvsmi_lines as
            select row_number() over () as line_no, line from read_csv({literal(str(head.path))}, columns = {{'line': 'VARCHAR'}}, header = false,
                                      delim = '\\x01', quote = '', escape = '', comment = '', auto_detect = false)""")

    def stage_cells(self, con: duckdb.DuckDBPyConnection, head: Head, model: str, fast: dict[str, str],
                    numbered: dict[str, str]) -> int:
        """The reader's cells model through the checks into the telemetry groups: once with the
        `fast` slots (the one pass, no row numbers), once with the `numbered` ones (to locate
        rejects). The cells the checks reject are located here, those the groups reject by
        group(). Returns the rows read."""
        sql = sql_text("10_staging", model)
        checks = sql_text("10_staging", "stg_nvidia_smi__checks.sql")
        for cells, slots, samples in (("_nvsmi_cells", fast, "_tel_samples"), ("_nvsmi_cells_numbered", numbered, "_tel_samples_numbered")):
            con.execute(f"create or replace temp view {cells} as " + fill(model, sql, slots))
            con.execute(f"create or replace temp view {cells}_checked as "
                        + fill("stg_nvidia_smi__checks.sql", checks, {"cells": cells}))
            con.execute(f"create or replace temp view {samples} as select row_number, series, value_text, ts_ms, line "
                        f"from {cells}_checked where check_name is null")
        rows_read, _ = self.group(con, head)
        con.execute("""insert into _rejects select row_number, column_name, check_name, value, message
                       from _nvsmi_cells_numbered_checked where check_name is not null""")
        return rows_read + one_row(con, "select count(*) from _nvsmi_cells_numbered_checked where check_name is not null")[0]

    def spacing_notes(self, con: duckdb.DuckDBPyConnection) -> list[str]:
        """A note when the log's samples are further apart or closer than [telemetry] interval_s:
        an hour's energy is its samples x interval_s (gpu_hours), so a 1 s log read at 30 s would
        count a short run thirty times over."""
        every_s, interval_s = one_row(con, """
            select median(d) / 1000, getvariable('interval_s') from (
                select ts_ms - lag(ts_ms) over (partition by series order by ts_ms) as d from _tel_samples)
            where d > 0""")
        if every_s is None or interval_s is None or round(every_s) == round(interval_s):
            return []
        return [f"samples every {every_s:.3g} s, but [telemetry] interval_s is {interval_s:g}: energy counts each sample "
                f"as {interval_s:g} s; set interval_s = {round(every_s)} in meterbook.toml for this log"]

    def stage_lines(self, con: duckdb.DuckDBPyConnection, head: Head, model: str, used: list[Field], **slots: str) -> int:
        """stage_cells() for a records model over the file's lines (raw_nvsmi_lines, `model` filled
        with `slots`), reading the columns `used`; a cell's number is its place in the file
        (line, then column)."""
        con.execute("create or replace temp table _nvsmi_used (i integer, metric varchar, column_name varchar, unit varchar)")
        con.executemany("insert into _nvsmi_used values (?, ?, ?, ?)", [[f.i, f.metric, f.column, f.unit] for f in used])
        self.lines_view(con, head)
        con.execute("create or replace temp view _nvsmi_records as " + read_sql("10_staging", model, **slots))
        cells = {"records": "_nvsmi_records"}
        return self.stage_cells(con, head, "stg_nvidia_smi__cells.sql", {**cells, "row_number": "null::bigint"},
                                {**cells, "row_number": "row_number() over (order by line_no, i)"})


def zone(head: Head, options: dict[str, Any]) -> tuple[str, list[str]]:
    """The zone of nvidia-smi's local timestamps as an SQL literal, and the note when assumed."""
    tz = options.get("timezone")
    if not tz:
        return literal("UTC"), ["timestamps read as UTC: nvidia-smi writes the machine's local time; pass --timezone if it was not UTC"]
    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InputError(head.path, f"unknown time zone {tz!r}", "--timezone",
                         "Pass the IANA zone the machine's clock runs in, such as Europe/Paris, or leave it out for UTC") from None
    return literal(tz), []


def split_header(line: str) -> tuple[list[str], list[str | None]]:
    """A query-gpu header's names and units: `power.draw [W]` -> ('power.draw', 'W')."""
    names: list[str] = []
    units: list[str | None] = []
    for cell in (c.strip() for c in line.split(",")):
        m = HEADER_UNIT.match(cell)
        names.append(m.group("name") if m else cell)
        units.append(m.group("unit") if m else None)
    return names, units


def first_line(head: Head) -> str:
    return next((ln for ln in head.text.splitlines() if ln.strip()), "")


def position(names: list[str], role: str) -> int | None:
    return next((names.index(n) + 1 for n in ID_NAMES[role] if n in names), None)


@register
class NvidiaSmiQueryReader(NvidiaSmiReader):
    kind = "nvidia-smi"
    description = "nvidia-smi --query-gpu CSV log (--format=csv, -l N)"

    def sniff(self, head: Head) -> str | None:
        line = first_line(head)
        names, _ = split_header(line)
        # an identity column too: a header without timestamp then gets its own Error, not "unknown"
        if pick_fields("query-gpu", names) and any(position(names, r) for r in ("timestamp", "uuid", "index")):
            return "query-gpu-csv"
        if any(TIMESTAMP.match(c.strip()) for c in line.split(",")):
            return "query-gpu-csv-noheader"
        return None

    def columns(self, head: Head, options: dict[str, Any]) -> tuple[list[str], list[str | None], str | None]:
        """The log's field names and header units, and its header line (None: noheader)."""
        line = first_line(head)
        if self.sniff(head) == "query-gpu-csv":
            names, units = split_header(line)
            return names, units, line.strip()
        if not options.get("query_gpu"):
            raise InputError(head.path, "nvidia-smi CSV without a header", "line 1 is a sample",
                             "Pass --query-gpu with the field list the log was written with (--query-gpu=timestamp,uuid,"
                             "power.draw,...), or log with --format=csv, which writes the header")
        names = [n.strip() for n in str(options["query_gpu"]).split(",")]
        return names, [None] * len(names), None

    def used(self, head: Head, names: list[str], units: list[str | None]) -> list[Field]:
        used = pick_fields("query-gpu", names)
        if not used:
            raise InputError(head.path, "no power, energy or utilization column", f"fields: {', '.join(names[:6])}",
                             "Query power.draw (and utilization.gpu) with nvidia-smi --query-gpu")
        for f in used:
            if units[f.i - 1] not in (None, f.unit):
                raise InputError(head.path, f"{f.column} is in {units[f.i - 1]}, not {f.unit}", "header",
                                 "Log the field as nvidia-smi writes it, or convert the column")
        if position(names, "timestamp") is None:
            raise InputError(head.path, "no timestamp column", "header", "Add timestamp to --query-gpu")
        if position(names, "uuid") is None and position(names, "index") is None:
            raise InputError(head.path, "no uuid or index column", "header", "Add uuid to --query-gpu")
        return used

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        names, units, header = self.columns(head, options)
        used = self.used(head, names, units)
        tz, notes = zone(head, options)
        expected, mig = self.scan(head, header, names, len(used))
        self.prepare(con)
        con.execute(f"create or replace temp table _nvsmi_file as select ? as host, {tz} as tz",
                    [options.get("host") or head.path.stem])
        pos = {role: str(position(names, role) or "null") for role in ID_NAMES}
        rows_read = self.stage_lines(con, head, "stg_nvidia_smi__samples.sql", used,
                                     header=literal(header) if header else "null", n_columns=str(len(names)),
                                     ts_i=pos["timestamp"], uuid_i=pos["uuid"], index_i=pos["index"], name_i=pos["name"],
                                     host_i=pos["host"])
        notes.append(f"read {', '.join(f.column for f in used)} of {len(names)} fields")
        notes += self.spacing_notes(con)
        if mig:
            notes.append(f"MIG mode on ({', '.join(sorted(mig))}): power is the whole GPU's, counted once; "
                         "utilization.gpu is [N/A] under MIG")
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or "query-gpu-csv", notes=notes,
                      expected_rows=expected)

    def scan(self, head: Head, header: str | None, names: list[str], n_used: int) -> tuple[int, set[str]]:
        """Rows by a count without DuckDB (a line of the header's shape gives a row per field
        read, any other line one), and the GPUs whose lines say MIG mode is on."""
        rows, mig = 0, set()
        mig_i, gpu_i = position(names, "mig"), position(names, "uuid") or position(names, "index")
        with text_lines(head) as fh:
            for line in fh:
                if not line.strip() or line.strip() == header:
                    continue
                cells = [c.strip() for c in line.split(",")]
                rows += n_used if len(cells) == len(names) else 1
                if mig_i and gpu_i and len(cells) == len(names) and cells[mig_i - 1] == "Enabled":
                    mig.add(cells[gpu_i - 1])
        return rows, mig
