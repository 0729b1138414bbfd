"""`nvidia-smi dmon` logs: blank-separated columns under a `# gpu pwr gtemp ...` header and a
`# Idx W C ...` unit line, both repeated every screenful; `-` where there is no reading (MIG);
`-o DT` adds date (YYYYMMDD) and time (HH:MM:SS) columns in the machine's local time. Without
them, times come from --start and --interval (dmon -d, 1 s by default), as for dcgmi dmon.

Of the columns (which depend on -s pucvmet) pwr and sm are read (sources/nvidia_smi_fields.csv):
one row per data line and such column; any other line that is not a # line is one row,
rejected. dmon names a GPU by its index only, so a GPU is the log's host (its file name) and
index, with no model.
"""
from __future__ import annotations

from typing import Any, Iterable

import duckdb

from core.errors import InputError
from sources.base import Head, Staged, register
from sources.dcgm_dmon import start_ms
from sources.nvidia_smi import Field, NvidiaSmiReader, pick_fields, text_lines, zone


def header_lines(lines: Iterable[str]) -> list[tuple[list[str], list[str]]]:
    """Each `# gpu ...` header with the unit line under it, as token lists without the '#'
    (pmon's `# gpu pid ...` is none)."""
    found = []
    prev: list[str] | None = None
    for ln in lines:
        tok = ln.replace("#", " ").split() if ln.lstrip().startswith("#") else []
        if prev is not None and "Idx" in tok:
            found.append((prev, tok))
        prev = tok if "gpu" in tok and "pid" not in tok else None
    return found


@register
class NvidiaSmiDmonReader(NvidiaSmiReader):
    kind = "nvidia-smi-dmon"
    description = "nvidia-smi dmon log"

    def sniff(self, head: Head) -> str | None:
        # a log starts with its header: a file that only holds one further down (a capture of
        # several commands' output) is no dmon log
        lines = [ln for ln in head.text.splitlines()[:50] if ln.strip()][:2]
        headers = header_lines(lines)
        if not headers or not pick_fields("dmon", headers[0][0]):
            return None
        return "dmon-dt" if "Date" in headers[0][0] else "dmon"

    def layout(self, head: Head) -> tuple[list[str], list[Field]]:
        """The header's columns and those read; refuses headers that change mid-log."""
        with text_lines(head) as fh:
            found = header_lines(fh)
        names, units = found[0]
        if any(h != names for h, _ in found):
            raise InputError(head.path, "the dmon headers name different columns", "repeated headers differ",
                             "Split the log where the dmon -s options changed, and ingest each part")
        if ("Date" in names) != ("Time" in names):
            raise InputError(head.path, "dmon log with a time but no date, or a date but no time", "header",
                             "Log with nvidia-smi dmon -o DT, or without -o and pass --start and --interval")
        used = pick_fields("dmon", names)
        for f in used:
            if units[f.i - 1] != f.unit:
                raise InputError(head.path, f"dmon column {f.column} is in {units[f.i - 1]}, not {f.unit}", "unit line",
                                 "Log with nvidia-smi dmon as it writes them")
        return names, used

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        names, used = self.layout(head)
        dated = "Date" in names
        start, interval = options.get("start"), options.get("interval")
        if not dated and not (start and interval):
            raise InputError(head.path, "dmon lines carry no time", "no -o DT date and time columns",
                             "Pass --start (ISO 8601 UTC of the first sample) and --interval (seconds, dmon -d), "
                             "or log with nvidia-smi dmon -o DT")
        tz, notes = zone(head, options) if dated else ("'UTC'", [f"sample times from --start {start} and --interval {interval} s"])
        self.prepare(con)
        con.execute(f"create or replace temp table _nvsmi_file as select ? as host, {tz} as tz, ?::bigint as start_ms, "
                    "?::bigint as interval_ms",
                    [options.get("host") or head.path.stem, start_ms(start), int(float(interval) * 1000) if interval else None])
        slot = {"date_i": str(names.index("Date") + 1) if dated else "null",
                "time_i": str(names.index("Time") + 1) if dated else "null"}
        rows_read = self.stage_lines(con, head, "stg_nvidia_smi_dmon__samples.sql", used,
                                     n_columns=str(len(names)), gpu_i=str(names.index("gpu") + 1), **slot)
        notes.append(f"read {', '.join(f.column for f in used)}; dmon names GPUs by index only (no UUID, no model)")
        notes += self.spacing_notes(con)
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or "dmon", notes=notes,
                      expected_rows=self.count(head, len(names), names.index("gpu"), len(used)))

    def count(self, head: Head, n_columns: int, gpu_at: int, n_used: int) -> int:
        """Rows by a count without DuckDB: a data line of the header's shape gives one per column
        read, any other line that is no # line one."""
        rows = 0
        with text_lines(head) as fh:
            for line in fh:
                tok = line.split()
                if not tok or line.lstrip().startswith("#"):
                    continue
                rows += n_used if len(tok) == n_columns and tok[gpu_at].isdigit() else 1
        return rows
