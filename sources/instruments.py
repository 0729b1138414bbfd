"""Contractual instruments and supplier-specific factors for market-based Scope 2 (kind
`instruments`): one CSV row per PPA, REC, GO or I-REC, or per supplier factor.

Columns: instrument_id, type, zone, period_start, period_end, mwh, g_per_kwh, source, and
optionally year (vintage) and notes. The GHG Protocol's Scope 2 Quality Criteria ask that an
instrument be for the market and period of the consumption it covers, be claimed once, and come
with its emission factor; int_market_claims.sql applies them.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import one_row
from schemas.contract import reject_sql
from schemas.instruments import Instruments
from sources.base import Head, Reader, Staged, register
from sources.linecount import LineCount
from sources.tabular import canonical_view, csv_names, stage_sql, tabular_dialect, tabular_expected_rows

ALIASES: dict[str, tuple[str, ...]] = {
    "instrument_id": ("instrument_id",),
    "type": ("type", "instrument_type"),
    "zone": ("zone",),
    "period_start": ("period_start",),
    "period_end": ("period_end",),
    "mwh": ("mwh", "volume_mwh"),
    "g_per_kwh": ("g_per_kwh", "gco2_per_kwh", "gco2e_per_kwh"),
    "source": ("source",),
    "year": ("year", "vintage_year"),
    "notes": ("notes",),
}
REQUIRED = {"instrument_id", "type", "zone", "period_start", "period_end", "g_per_kwh", "source"}


@register
class InstrumentsReader(Reader):
    kind = "instruments"
    table = "instruments"
    description = "contractual instruments and supplier factors (instrument_id,type,zone,period_start,period_end,mwh,g_per_kwh,source)"

    def sniff(self, head: Head) -> str | None:
        lower = {n.lower() for n in csv_names(head)} if not head.parquet else set()
        return "instruments-csv" if {"instrument_id", "zone", "period_start", "period_end"} <= lower else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        canonical_view(con, head, ALIASES, REQUIRED, "raw_instruments", padded=bool(options.get("padded")))
        rows_read = stage_sql(con, head.path, "stg_instruments__instruments.sql")
        sql = reject_sql(Instruments, {r[0] for r in con.execute("describe _staged").fetchall()},
                         "(select * from _staged where len(_errors) = 0)")
        if sql:
            con.execute(sql)
        return Staged(rows_read=rows_read, format_version="instruments-csv")

    def dialect(self, head: Head) -> str | None:
        return tabular_dialect(head)

    def expected_rows(self, con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None, staged: Staged) -> int | None:
        return tabular_expected_rows(con, head, count)

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        n, mwh, zones = one_row(con, """select count(*), sum(volume_mwh), list(distinct zone order by zone)
                                        from instruments where file_id = ?""", [file_id])
        return {"instruments": n, "volume_mwh": float(mwh or 0), "zones": zones or []}
