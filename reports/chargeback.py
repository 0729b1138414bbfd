"""Chargeback report: query the marts for one month, build the context, render PDF + CSV."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb

from pipelines.config import Config
from pipelines.errors import InputError
from pipelines.quality import quality_summary, rows_as_dicts
from pipelines.stages import run_stages
from reports.methodology import methodology_context
from reports.render import bar_chart_svg, render_pdf, write_csv

CSV_COLUMNS = [
    "month", "team", "currency", "billed_cost", "effective_cost", "list_cost", "gpu_hours", "gpu_hours_observed",
    "idle_gpu_hours", "util_mean", "it_energy_kwh", "it_energy_kwh_measured", "facility_energy_kwh",
    "facility_energy_kwh_low", "facility_energy_kwh_high", "co2e_kg", "co2e_kg_low", "co2e_kg_high", "assumption_ids",
]


def build_context(con: duckdb.DuckDBPyConnection, config: Config, month: str) -> dict[str, Any]:
    run_stages(con, config)
    teams = rows_as_dicts(con, "select * from team_month where month = ? order by billed_cost desc, team", [month])
    if not teams:
        months = [r[0] for r in con.execute("select distinct month from team_month order by 1").fetchall()]
        raise InputError(f"--month {month}", "no charges or telemetry for this month",
                         f"months in the warehouse: {', '.join(months) or 'none'}",
                         "Ingest the month's billing exports first, or pick one of those months")
    currencies = sorted({t["currency"] for t in teams if t["currency"]})
    if len(currencies) > 1:
        raise InputError(f"--month {month}", "charges in several currencies", ", ".join(currencies),
                         "Report one billing account per currency (ingest them into separate warehouses)")
    recon = rows_as_dicts(con, "select * from reconciliation where month = ? order by file_id", [month])
    totals = {k: sum((t[k] or 0) for t in teams) for k in (
        "billed_cost", "effective_cost", "list_cost", "gpu_hours", "gpu_hours_observed", "idle_gpu_hours",
        "it_energy_kwh", "it_energy_kwh_measured", "facility_energy_kwh", "facility_energy_kwh_low",
        "facility_energy_kwh_high", "co2e_kg", "co2e_kg_low", "co2e_kg_high")}
    util = con.execute("""select sum(coverage * util_mean) / nullif(sum(coverage), 0) from gpu_hours
                          where strftime(hour_start, '%Y-%m') = ?""", [month]).fetchone()[0]
    invoice = recon[0]["invoice_billed_cost"] if recon else 0
    ids = sorted({i for t in teams for i in (t["assumption_ids"] or [])})
    tiers = rows_as_dicts(con, """
        select 'measured' as basis, energy_tier as tier, sum(energy_kwh) as it_energy_kwh from gpu_hours
        where strftime(hour_start, '%Y-%m') = ? group by all
        union all
        select 'estimated', 'tdp_model', sum(it_energy_kwh) from int_energy_lines where basis = 'estimated' and month = ?
        order by it_energy_kwh desc""", [month, month])
    return {
        "month": month,
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "currency": currencies[0] if currencies else "USD",
        "teams": teams,
        "totals": totals,
        "util_mean": util,
        "unallocated_name": config.unallocated,
        "unallocated": next((t for t in teams if t["team"] == config.unallocated), None),
        "reconciliation": recon,
        "invoice_billed_cost": invoice,
        "reconciliation_difference": (totals["billed_cost"] - invoice) if recon else 0,
        "quality": quality_summary(con),
        "tiers": tiers,
        "assumptions": assumptions_used(con, ids),
        "methodology": methodology_context(con),
        "cost_chart": bar_chart_svg([t["team"] for t in teams], [float(t["billed_cost"]) for t in teams],
                                    f"billed cost ({currencies[0] if currencies else 'USD'})"),
    }


def assumptions_used(con: duckdb.DuckDBPyConnection, ids: list[str]) -> list[dict[str, Any]]:
    """The coefficient rows behind the estimates, looked up by id across the reference tables."""
    if not ids:
        return []
    tables = [r[0] for r in con.execute(
        "select table_name from information_schema.columns where column_name = 'coefficient_id' and table_name like 'ref_%'").fetchall()]
    union = " union all ".join(
        f"select coefficient_id, value, unit, low, high, source, notes from {t}" for t in tables)
    return rows_as_dicts(con, f"select * from ({union}) where coefficient_id in (select unnest(?::varchar[])) order by 1", [ids])


def write_chargeback(con: duckdb.DuckDBPyConnection, config: Config, month: str, out: Path) -> list[Path]:
    ctx = build_context(con, config, month)
    csv_path = write_csv(out / "chargeback.csv", ctx["teams"], CSV_COLUMNS)
    pdf_path = render_pdf("chargeback.html", ctx, out / "chargeback.pdf")
    return [pdf_path, csv_path]
