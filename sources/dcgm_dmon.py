"""`dcgmi dmon` logs: fixed-width columns under a repeated #Entity header, one line per entity
and sample, `N/A` for blanks; times from a per-line prefix or from --start and --interval."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import duckdb

from pipelines.errors import InputError
from pipelines.warehouse import read_sql
from sources.base import Head, Staged, register
from sources.tabular import sql_str
from sources.telemetry import TelemetryReader


def headers(text: str) -> list[list[str]]:
    return [ln.split()[1:] for ln in text.splitlines() if ln.lstrip().startswith("#Entity")]


@register
class DcgmDmonReader(TelemetryReader):
    kind = "dcgm-dmon"
    description = "dcgmi dmon log"

    def sniff(self, head: Head) -> str | None:
        return "dmon" if headers(head.text) and "\nID" in head.text else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        hdrs = headers(head.path.read_text(encoding="utf-8", errors="replace"))
        if any(h != hdrs[0] for h in hdrs):
            raise InputError(head.path, "the #Entity headers name different fields", "repeated headers differ",
                             "Split the log where the dmon -e field list changed, and ingest each part")
        start, interval = options.get("start"), options.get("interval")
        prefixed = any(ln.split()[0] not in ("GPU", "GPU-I", "GPU-CI", "SW", "CPU", "ID") and not ln.lstrip().startswith("#")
                       for ln in head.text.splitlines() if ln.strip())
        if not prefixed and not (start and interval):
            raise InputError(head.path, "dmon lines carry no time", "no timestamp prefix on data lines",
                             "Pass --start (ISO 8601 UTC of the first sample) and --interval (seconds), as given to dcgmi dmon -d")
        start_ms = int((datetime.fromisoformat(start.replace("Z", "+00:00")).astimezone(timezone.utc).replace(tzinfo=None)
                        - datetime(1970, 1, 1)).total_seconds() * 1000) if start else None
        host = options.get("host") or head.path.stem
        self.prepare(con)
        con.execute("create or replace temp table _dmon as select ?::varchar[] as fields, ? as host, ?::bigint as start_ms, "
                    "?::bigint as interval_ms", [hdrs[0], host, start_ms, int(float(interval) * 1000) if interval else None])
        con.execute(f"""create or replace temp view raw_dmon_lines as
            select line from read_csv({sql_str(str(head.path))}, columns = {{'line': 'VARCHAR'}}, header = false,
                                      delim = '\\x01', quote = '', escape = '', auto_detect = false)""")
        sql = read_sql("10_staging", "stg_dcgm_dmon__samples.sql")
        con.execute("create or replace temp view _tel_samples as " + sql.replace("{{ row_number }}", "null::bigint"))
        con.execute("create or replace temp view _tel_samples_numbered as " + sql.replace("{{ row_number }}", "row_number() over (order by l.line_no, f.i)"))
        rows_read, _ = self.group(con, head)
        notes = [] if prefixed else [f"sample times from --start {start} and --interval {interval} s"]
        return Staged(rows_read=rows_read, format_version="dmon", notes=notes)
