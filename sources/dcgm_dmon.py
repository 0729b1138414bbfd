"""`dcgmi dmon` logs: fixed-width columns under a repeated #Entity header, one line per entity
and sample, `N/A` for blanks; times from a per-line prefix or from --start and --interval.

Lines that are not samples: the `#Entity` header and the `ID` units line under it (bare `ID`
when no field has a unit), blank lines, and the message dcgmi prints when it is stopped with
Ctrl-C ("dmon was stopped do to receiving a signal"; "due to" in later releases). Any other line
is one rejected row, never one reject per field. The reader counts lines itself, in Python,
and the samples staged must be data lines x fields + other lines (the independent count).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import duckdb

from core.errors import InputError
from core.sql import literal, sql_text
from sources.base import Head, Staged, register
from sources.telemetry import TelemetryReader

# Entity types dmon prints before the entity id (dcgmi/DeviceMonitor.cpp, EntityListHelpers.cpp).
ENTITY_TYPES = ("GPU", "GPU-I", "GPU-CI", "SW", "CPU", "vGPU", "Switch")
# dcgmi's own last words when interrupted; the spelling changed between releases.
STOPPED = r"^\s*dmon was stopped d[ou]e? to receiving a signal"
UNITS = r"^\s*ID(\s|$)"


@dataclass
class DmonLines:
    """A dmon log's lines by kind, counted without DuckDB."""
    headers: list[list[str]] = field(default_factory=list)
    data: int = 0
    prefixed: int = 0          # data lines with a wall-clock prefix
    other: list[int] = field(default_factory=list)    # line numbers of lines that are none of these
    stopped_at: int | None = None


def scan_lines(head: Head) -> DmonLines:
    """One streaming pass over the log: what each line is, as the staging model will see it."""
    found = DmonLines()
    stopped, units = re.compile(STOPPED), re.compile(UNITS)
    with open(head.path, encoding="utf-8", errors="replace", newline="") as fh:
        for n, line in enumerate(fh, 1):
            tok = line.split()
            if not tok:
                continue
            if tok[0].startswith("#"):
                if tok[0] == "#Entity":
                    found.headers.append(tok[1:])
            elif units.match(line):
                continue
            elif stopped.match(line):
                found.stopped_at = n
            elif tok[0] in ENTITY_TYPES:
                found.data += 1
            elif len(tok) > 1 and tok[1] in ENTITY_TYPES:
                found.data += 1
                found.prefixed += 1
            else:
                found.other.append(n)
    return found


def start_ms(start: str | None) -> int | None:
    """--start (ISO 8601, UTC unless it names an offset) as epoch milliseconds."""
    if not start:
        return None
    return int((datetime.fromisoformat(start.replace("Z", "+00:00")).astimezone(timezone.utc).replace(tzinfo=None)
                - datetime(1970, 1, 1)).total_seconds() * 1000)


@register
class DcgmDmonReader(TelemetryReader):
    kind = "dcgm-dmon"
    description = "dcgmi dmon log"

    def sniff(self, head: Head) -> str | None:
        has_header = any(ln.lstrip().startswith("#Entity") for ln in head.text.splitlines())
        has_units = any(re.match(UNITS, ln) for ln in head.text.splitlines())
        return "dmon" if has_header and has_units else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        lines = scan_lines(head)
        hdrs = lines.headers
        if any(h != hdrs[0] for h in hdrs):
            raise InputError(head.path, "the #Entity headers name different fields", "repeated headers differ",
                             "Split the log where the dmon -e field list changed, and ingest each part")
        start, interval = options.get("start"), options.get("interval")
        if lines.data and not lines.prefixed and not (start and interval):
            raise InputError(head.path, "dmon lines carry no time", "no timestamp prefix on data lines",
                             "Pass --start (ISO 8601 UTC of the first sample) and --interval (seconds), as given to dcgmi dmon -d")
        # written as a label value is (the label parser decodes it): a quote in a name stays
        host = (options.get("host") or head.path.stem).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        self.prepare(con)
        con.execute("create or replace temp table _dmon as select ?::varchar[] as fields, ? as host, ?::bigint as start_ms, "
                    "?::bigint as interval_ms", [hdrs[0], host, start_ms(start), int(float(interval) * 1000) if interval else None])
        con.execute(f"""create or replace temp view raw_dmon_lines as
            select line from read_csv({literal(str(head.path))}, columns = {{'line': 'VARCHAR'}}, header = false,
                                      delim = '\\x01', quote = '', escape = '', comment = '', auto_detect = false)""")
        self.sample_views(con, "stg_dcgm_dmon__samples.sql", sql_text("10_staging", "stg_dcgm_dmon__samples.sql"),
                          "row_number() over (order by line_no, i)",
                          entity_types="[" + ", ".join(literal(t) for t in ENTITY_TYPES) + "]",
                          stopped=literal(STOPPED), units=literal(UNITS))
        rows_read, _ = self.group(con, head)
        notes = [] if lines.prefixed else [f"sample times from --start {start} and --interval {interval} s"]
        if lines.stopped_at:
            notes.append(f"dmon was stopped by a signal (line {lines.stopped_at}); samples up to there are read")
        return Staged(rows_read=rows_read, format_version="dmon", notes=notes,
                      expected_rows=lines.data * len(hdrs[0]) + len(lines.other))
