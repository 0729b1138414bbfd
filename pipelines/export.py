"""`meterbook export focus`: the month's charges as FOCUS 1.2 (Parquet and CSV), energy and
carbon in x_ columns, checked against the FOCUS validator's rule model when it is at hand."""
from __future__ import annotations

from pathlib import Path

import duckdb

from core.errors import InputError
from core.sql import literal


def export_focus(con: duckdb.DuckDBPyConnection, month: str, out: Path) -> list[Path]:
    """Write <out>.parquet and <out>.csv (out without suffix, or with either suffix) from the
    focus_export mart (the build step writes it)."""
    n = con.execute("select count(*) from focus_export where month = ?", [month]).fetchone()[0]
    if n == 0:
        raise InputError(f"--month {month}", "no charges for this month", "focus_export is empty for it",
                         "Ingest that month's billing exports first")
    base = out.with_suffix("") if out.suffix in (".csv", ".parquet") else out
    base.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt, suffix in (("parquet", ".parquet"), ("csv", ".csv")):
        path = base.with_suffix(suffix)
        con.execute(f"copy (select * exclude (month) from focus_export where month = ? order by x_SourceFileSha256, "
                    f"x_SourceRow, x_SourceLine) to {literal(path)} (format {fmt})", [month])
        written.append(path)
    return written
