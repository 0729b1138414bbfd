"""`meterbook export jobs`: the month's job_month rows (cost, energy, CO2e per unit of work per
job and team) as CSV and Parquet, for a FinOps tool or a spreadsheet. Reads the mart only."""
from __future__ import annotations

from pathlib import Path

import duckdb

from pipelines.errors import InputError
from pipelines.export import _sql_path


def export_jobs(con: duckdb.DuckDBPyConnection, month: str, out: Path) -> list[Path]:
    """Write <out>.csv and <out>.parquet (out without suffix, or with either suffix)."""
    n = con.execute("select count(*) from job_month where month = ?", [month]).fetchone()[0]
    if n == 0:
        raise InputError(f"--month {month}", "no jobs for this month", "job_month is empty for it",
                         "Ingest the month's work log (kind work) with its billing and telemetry first")
    base = out.with_suffix("") if out.suffix in (".csv", ".parquet") else out
    base.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt, suffix in (("csv", ".csv"), ("parquet", ".parquet")):
        path = base.with_suffix(suffix)
        con.execute(f"copy (select * from job_month where month = ? order by job_id, team, currency) "
                    f"to '{_sql_path(path)}' (format {fmt})", [month])
        written.append(path)
    return written
