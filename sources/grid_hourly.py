"""Hourly grid carbon intensity (kind `grid-hourly`): Electricity Maps' CSV exports and a plain
`zone, hour_utc, gco2_per_kwh[, basis]` layout for series built from grid operators' data
(EIA-930, ENTSO-E).

Electricity Maps' data portal writes, per zone and hour: Datetime (UTC), Country, Zone name, Zone
id, carbon intensity gCO2eq/kWh direct and life cycle, carbon-free (earlier: low-carbon) and
renewable percentages, Data source, Data estimated, Data estimation method. The 2021-2023 files
spell the headers "Zone Id", "(LCA)", "Low Carbon Percentage"; later ones "Zone id", "(Life
cycle)", "Carbon-free energy percentage (CFE%)". Both are read by name, case ignored.
"""
from __future__ import annotations

import re
from typing import Any

import duckdb

from core.sql import literal, one_row
from schemas.contract import reject_sql
from schemas.grid_hours import GridHours
from sources.base import Head, Reader, Staged, register
from sources.linecount import LineCount
from sources.tabular import canonical_view, csv_names, stage_sql, tabular_dialect, tabular_expected_rows

EM_ALIASES: dict[str, tuple[str, ...]] = {
    "zone": ("Zone id",),
    "hour": ("Datetime (UTC)",),
    "country": ("Country",),
    "zone_name": ("Zone name",),
    "carbon_free_pct": ("Carbon-free energy percentage (CFE%)", "Low Carbon Percentage"),
    "renewable_pct": ("Renewable energy percentage (RE%)", "Renewable Percentage"),
    "data_source": ("Data source",),
    "estimated": ("Data estimated",),
    "estimation_method": ("Data estimation method",),
}
PLAIN_ALIASES: dict[str, tuple[str, ...]] = {
    "zone": ("zone",),
    "hour": ("hour_utc", "datetime_utc"),
    "value": ("gco2_per_kwh", "gco2e_per_kwh", "g_per_kwh"),
    "basis": ("basis",),
}
# Every canonical name the staging model reads; a layout's missing ones are null.
CANONICAL = ("zone", "hour", "direct", "lifecycle", "value", "basis", "carbon_free_pct", "renewable_pct",
             "data_source", "estimated", "estimation_method")


def intensity_column(names: tuple[str, ...], which: str) -> str | None:
    """The header of Electricity Maps' direct or life-cycle intensity column, however spelled
    (gCO₂eq or gCO2eq, 'Carbon Intensity' or 'Carbon intensity', '(LCA)' or '(Life cycle)')."""
    tag = r"\(direct\)" if which == "direct" else r"\((lca|life ?cycle)\)"
    return next((n for n in names if re.search(r"carbon intensity", n, re.I) and re.search(tag, n, re.I)), None)


@register
class GridHourlyReader(Reader):
    kind = "grid-hourly"
    table = "grid_hours"
    description = "hourly grid carbon intensity (Electricity Maps CSV, or zone,hour_utc,gco2_per_kwh[,basis])"

    def sniff(self, head: Head) -> str | None:
        if head.parquet or not head.columns:
            return None
        names = csv_names(head)
        lower = {n.lower() for n in names}
        if "datetime (utc)" in lower and (intensity_column(names, "direct") or intensity_column(names, "lifecycle")):
            return "electricity-maps"
        if "zone" in lower and {"hour_utc", "datetime_utc"} & lower and {"gco2_per_kwh", "gco2e_per_kwh", "g_per_kwh"} & lower:
            return "plain"
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        layout = self.sniff(head) or "plain"
        names = csv_names(head)
        if layout == "electricity-maps":
            aliases = {**EM_ALIASES, "direct": tuple(filter(None, [intensity_column(names, "direct")])),
                       "lifecycle": tuple(filter(None, [intensity_column(names, "lifecycle")]))}
            hour_col, value_col = "Datetime (UTC)", "Carbon intensity"
        else:
            aliases = dict(PLAIN_ALIASES)
            lower = {n.lower(): n for n in names}
            hour_col = next(lower[a] for a in PLAIN_ALIASES["hour"] if a in lower)
            value_col = next(lower[a] for a in PLAIN_ALIASES["value"] if a in lower)
        aliases = {c: aliases.get(c, ()) for c in CANONICAL}
        canonical_view(con, head, aliases, {"zone", "hour"}, "raw_grid", padded=bool(options.get("padded")))
        rows_read = stage_sql(con, head.path, "stg_grid_hourly__hours.sql",
                              {"hour_column": literal(hour_col), "value_column": literal(value_col)})
        # lines a row-level error already rejects are not checked twice
        sql = reject_sql(GridHours, {r[0] for r in con.execute("describe _staged").fetchall()},
                         "(select * from _staged where zone is not null and hour_start is not null "
                         "and intensity_g_per_kwh is not null)")
        if sql:
            con.execute(sql)
            # a row's two lines (direct, life-cycle) fail a check on the row's own cells twice: once is the reject
            con.execute("create or replace temp table _rejects as select distinct * from _rejects")
        return Staged(rows_read=rows_read, format_version=layout)

    def dialect(self, head: Head) -> str | None:
        return tabular_dialect(head)

    def expected_rows(self, con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None, staged: Staged) -> int | None:
        return tabular_expected_rows(con, head, count)

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        zones, hours, first, last, types = one_row(con, """
            select count(distinct zone), count(distinct hour_start), min(hour_start), max(hour_start),
                   list(distinct factor_type order by factor_type)
            from grid_hours where file_id = ?""", [file_id])
        return {"zones": zones, "hours": hours, "first_hour": str(first) if first else None,
                "last_hour": str(last) if last else None, "factor_types": types or []}
