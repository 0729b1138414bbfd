"""`meterbook export jobs`: the month's job_month_reporting rows (cost, energy, CO2e per unit of
work per job and team; money as billed in `currency` and in the reporting currency beside it) as
CSV and Parquet, for a FinOps tool or a spreadsheet. Reads the mart only."""
from __future__ import annotations

from pathlib import Path

import duckdb

from core.errors import InputError
from core.sql import one_row
from pipelines.export import copy_out


def export_jobs(con: duckdb.DuckDBPyConnection, month: str, out: Path) -> list[Path]:
    """Write <out>.parquet and <out>.csv (out without suffix, or with either suffix)."""
    n = one_row(con, "select count(*) from job_month where month = ?", [month])[0]
    if n == 0:
        raise InputError(f"--month {month}", "no jobs for this month", "job_month is empty for it",
                         "Ingest the month's work log (kind work) with its billing and telemetry first")
    return copy_out(con, "select * from job_month_reporting where month = ? order by job_id, team, currency", [month], out)
