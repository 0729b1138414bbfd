"""Data-quality summary of the warehouse: files, rows, rejects by check, telemetry coverage."""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import rows_as_dicts, table_exists

# A month's files: those its figures rest on (month_files), and files that loaded no row at all
# (nothing dates them, and a file that was lost whole must show in every report).
MONTH_SCOPE = """(f.file_id in (select file_id from month_files where month = $month)
                   or (f.status = 'loaded' and f.rows_loaded = 0)
                   or f.replaced_by in (select file_id from month_files where month = $month))"""


def _located(con: duckdb.DuckDBPyConnection, table: str, scope: str, params: dict) -> list[dict[str, Any]]:
    """Located row problems (rejects, or rows kept with a cell emptied) by file, check and column."""
    return rows_as_dicts(con, f"""
        select f.path as file, r.check_name, r.column_name, count(distinct r.row_number) as rows,
               min(r.row_number) as first_row, any_value(r.message order by r.row_number) as message
        from {table} r join source_files f using (file_id)
        where f.status = 'loaded' and {scope}
        group by all order by rows desc, file, r.check_name, r.column_name""", params)


def quality_summary(con: duckdb.DuckDBPyConnection, month: str | None = None,
                    also_kinds: tuple[str, ...] = ()) -> dict[str, Any]:
    """Files, rows and rejects of the warehouse, or of the files a month rests on (and files of
    `also_kinds`, which no month dates): a month's report then says the same whatever other
    months are loaded beside it."""
    scope, params = (f"({MONTH_SCOPE} or list_contains($kinds, f.kind))", {"month": month, "kinds": list(also_kinds)}) \
        if month else ("true", {})
    files = rows_as_dicts(con, f"""
        select file_id, path, sha256, kind, format_version, rows_read, rows_loaded, rows_rejected, status, loaded_at
        from source_files f where {scope} order by path, sha256""", params)
    live = [f for f in files if f["status"] == "loaded"]
    by_check = _located(con, "rejects", scope, params)
    # rows loaded with a cell left empty (a tag that did not parse, a short row): their cost counts
    kept = _located(con, "row_findings", scope, params) if table_exists(con, "row_findings") else []
    contract = rows_as_dicts(con, "select * from contract_findings order by rows desc, table_name, column_name, check_name") \
        if table_exists(con, "contract_findings") else []
    return {
        "contract_findings": contract,
        "files": len(live),
        "files_replaced": len(files) - len(live),
        "rows_read": sum(f["rows_read"] for f in live),
        "rows_loaded": sum(f["rows_loaded"] for f in live),
        "rows_rejected": sum(f["rows_rejected"] for f in live),
        "rejects_by_check": by_check,
        "row_findings_by_check": kept,
        "file_list": files,
    }
