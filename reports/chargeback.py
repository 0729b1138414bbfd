"""Chargeback report: query the marts for one month, build the context, render PDF + CSV.

One context feeds the monthly PDF and the per-team statements. It reads marts only (the build
step, `meterbook build`, writes them): every figure here is computed once, in SQL.
"""
from __future__ import annotations

import copy
import gc
import hashlib
import json
import multiprocessing
import os
import re
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import duckdb

from core.atomic import replacing_set, write_text
from core.errors import InputError
from core.months import check_month
from core.sql import one_row, rows_as_dicts, table_exists
from pipelines.config import Config
from pipelines.quality import quality_summary
from reports import charts
from reports.carbon import carbon_context
from reports.job_economics import job_economics
from reports.provenance import document_date, methodology_file_name, provenance
from reports.reconciliation import reconciliation_summary
from reports.render import TEMPLATES, csv_text, environment, rounding_line, write_pdf

CSV_COLUMNS = [
    "month", "team", "currency", "billed_cost", "effective_cost", "list_cost", "gpu_hours", "gpu_hours_observed",
    "idle_gpu_hours", "unallocated_capacity_gpu_hours", "unallocated_capacity_gpu_hours_observed", "unallocated_capacity_cost",
    "util_mean", "it_energy_kwh", "it_energy_kwh_measured", "facility_energy_kwh",
    "facility_energy_kwh_low", "facility_energy_kwh_high", "co2e_kg", "co2e_kg_low", "co2e_kg_high", "assumption_ids",
]
TOTAL_KEYS = ("billed_cost", "effective_cost", "list_cost", "gpu_hours", "gpu_hours_observed", "idle_gpu_hours",
              "unallocated_capacity_gpu_hours", "unallocated_capacity_gpu_hours_observed",
              "it_energy_kwh", "it_energy_kwh_measured", "facility_energy_kwh", "facility_energy_kwh_low",
              "facility_energy_kwh_high", "co2e_kg", "co2e_kg_low", "co2e_kg_high")
ASSUMPTION_COLUMNS = ["coefficient_id", "value", "unit", "low", "high", "source", "notes"]
# what one run publishes, as one set: a run replaces all three (statements included) or none
SET_MEMBERS = ("chargeback.pdf", "chargeback.csv", "teams")
HISTORY_MONTHS = 6      # trend window on a team page: the month and the five before it
TEAM_JOBS = 5
PAGE1_TEAMS = 12        # team rows on the first page; beyond, the table lists the largest and an All teams table follows
TOP_FINDINGS = 3        # material decisions on the first page (with 8-12 teams above them, 4 ran over it); Findings lists the rest
MATCHING_ORDER = ("unmatched_host", "unobserved_resource")
MATCHING_ROWS = 12      # telemetry-to-bill rows printed; the rest counted ("and N more")
DAILY_TEAMS = 6         # series in a daily chart; the rest are one "other teams" series
STATEMENT_DAYS = 31     # namespace x day rows on a statement
ALLOCATION_METERS = ("billed_cost", "effective_cost", "gpu_hours", "facility_energy_kwh", "co2e_kg")
# team_month columns a team page states in words (label, and how to print the value)
TEAM_ECONOMICS = [
    ("effective_gpu_hours", "Effective GPU-hours (observed GPU-hours x utilization)", "hours"),
    ("cost_per_effective_gpu_hour", "Effective cost per effective GPU-hour", "money"),
    ("idle_cost", "Effective cost of idle GPU time", "money"),
    ("unallocated_capacity_cost", "Effective cost of unallocated capacity", "money"),
    ("co2e_market_kg", "CO2e, market-based (kg)", "kg"),
]
TEAM_CHANGES = [
    ("billed_cost_change", "Billed"),
    ("effective_cost_change", "Effective"),
    ("facility_energy_kwh_change", "Facility energy (kWh)"),
]
# The per-category split of cost is the Lines table of the same page: not printed twice
SPLIT_BY_CATEGORY = tuple(f"{m}_{c}" for m in ("billed_cost", "effective_cost") for c in ("direct", "idle", "shared", "credits"))
CHUNK_TEAMS = 25        # the most team pages in one document; beyond, the report is laid out in parts
# Team pages per part: a fixed number, never derived from the core count, so that the merged
# report is the same bytes on any machine. 200 teams make 10 parts of team pages for 2 cores.
PART_TEAMS = 20
PART_LABELS = {"all": "page", "front": "summary", "teams": "", "appendix": "appendix"}
CHART_TEAMS = 20        # bars per chart; the rest are one "other teams" bar (the table lists all)


def _by_team(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["team"], []).append({k: v for k, v in r.items() if k not in ("team", "month")})
    return out


def team_lines(con: duckdb.DuckDBPyConnection, month: str, currency: str) -> dict[str, list[dict]]:
    """Per team, what its figures are made of: the allocation engine's lines, one row per
    category and rule, the main meters as columns, money in the report's currency (each line's
    converted amount, allocation_day_reporting, so the lines add up to the team's total). A
    line billed in another currency names it (billed_in). Energy lines sit on the row of the
    charges they came with: the allocation gives a resource's energy the rule its charges took,
    and the row takes those charges' category and currency (an energy group has neither of its
    own that a reader would recognise: idle time's energy is a group of its own)."""
    money = ("billed_cost", "effective_cost")
    meters = ", ".join(f"sum(coalesce(r.amount_reporting, l.amount)) filter (where l.meter = '{m}') as {m}"
                       if m in money else f"sum(l.amount) filter (where l.meter = '{m}') as {m}"
                       for m in ALLOCATION_METERS)
    return _by_team(rows_as_dicts(con, f"""
        with converted as (
            select month, team, meter, rule, source_group, sum(amount_reporting) as amount_reporting
            from allocation_day_reporting
            where month = ? and meter in ('billed_cost', 'effective_cost')
            group by all
        ),
        charged as (
            select team, rule, resource_id, min(category) as category, min(currency) as currency
            from allocation_lines
            where month = ? and currency is not null and resource_id is not null
            group by all
        )
        select l.team, coalesce(c.category, l.category, '–') as category, nullif(coalesce(l.currency, c.currency), ?) as billed_in,
               coalesce(l.rule, '–') as rule, count(distinct l.source_group) as sources, {meters}
        from allocation_lines l
        left join converted r on r.month = l.month and r.team = l.team and r.meter = l.meter
            and r.rule is not distinct from l.rule and r.source_group = l.source_group
        left join charged c on l.currency is null and c.team = l.team and c.rule = l.rule and c.resource_id = l.resource_id
        where l.month = ? group by all
        order by l.team, billed_cost desc nulls last, category, billed_in, rule""", [month, month, currency, month]))


def top_jobs(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, list[dict]]:
    """Busiest jobs per team by the GPU-hours they held: the workloads (namespace/pod) telemetry
    saw (workload_month: observed is all that is known of them) and an owned cluster's Slurm jobs
    (cluster_job_month: from their accounting, the observed part beside it)."""
    return _by_team(rows_as_dicts(con, f"""
        with jobs as (
            select team, namespace, coalesce(nullif(pod, ''), '–') as job, 'telemetry' as source,
                gpu_hours, gpu_hours as gpu_hours_observed, it_energy_kwh, util_mean
            from workload_month where month = ?
            union all
            select team, coalesce(account, '–'), job_id || coalesce(' ' || job_name, ''), 'Slurm ' || cluster,
                gpu_hours, gpu_hours_observed, it_energy_kwh, util_mean
            from cluster_job_month where month = ?
        )
        select * from jobs
        qualify row_number() over (partition by team order by gpu_hours desc, namespace, job) <= {TEAM_JOBS}
        order by team, gpu_hours desc, namespace, job""", [month, month]))


def sharing(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, list[dict]]:
    """The month's GPU-hours and cost by sharing mode, the MIG capacity no pod held, per node, and
    whether an owned cluster has unallocated capacity too (the page names both kinds: cluster_capacity)."""
    modes = rows_as_dicts(con, """select sharing_mode, string_agg(distinct split_rule, ',' order by split_rule) as split_rules,
            count(distinct resource_id) as nodes,
            coalesce(sum(amount) filter (where meter = 'gpu_hours_observed'), 0) as gpu_hours_observed,
            coalesce(sum(amount) filter (where meter = 'billed_cost'), 0) as billed_cost
        from allocation_day where month = ? and sharing_mode is not null and split_rule <> 'mig_unallocated'
        group by sharing_mode order by gpu_hours_observed desc, sharing_mode""", [month])
    capacity = rows_as_dicts(con, """select resource_id, coalesce(sum(amount) filter (where meter = 'gpu_hours'), 0) as gpu_hours,
            coalesce(sum(amount) filter (where meter = 'billed_cost'), 0) as billed_cost
        from allocation_day where month = ? and rule = 'unallocated_capacity'
        group by resource_id order by billed_cost desc, resource_id""", [month])
    # an owned cluster's GPU-hours no job held are a category of their own (its cost pool's line)
    ((owned,),) = con.execute("select count(*) > 0 from allocation_lines where month = ? and category = 'unallocated_capacity'",
                              [month]).fetchall()
    return {"modes": modes, "capacity": capacity, "cluster_capacity": owned}


def history(con: duckdb.DuckDBPyConnection, month: str) -> tuple[list[str], dict[str, dict[str, dict]]]:
    months = [r[0] for r in con.execute(
        "select distinct month from team_month_reporting where month <= ? order by month desc limit ?",
        [month, HISTORY_MONTHS]).fetchall()][::-1]
    rows = rows_as_dicts(con, """select month, team, billed_cost, gpu_hours, idle_gpu_hours, facility_energy_kwh, co2e_kg
                                 from team_month_reporting where month in (select unnest(?::varchar[]))""", [months])
    out: dict[str, dict[str, dict]] = {}
    for r in rows:
        out.setdefault(r["team"], {})[r["month"]] = r
    return months, out


def findings(con: duckdb.DuckDBPyConnection, month: str) -> list[dict]:
    """The month's findings in reading order (findings_ranked: invoice differences first, then
    material decisions by money at stake), each with the team that pays for its resource."""
    return [{k: v for k, v in r.items() if k != "month"}
            for r in rows_as_dicts(con, "select * from findings_ranked where month = ? order by rank", [month])]


def split_findings(found: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    """(page-1 findings, the other decisions, telemetry-to-bill matching rows)."""
    decisions = [f for f in found if f["section"] == "decision"]
    top = [f for f in decisions if f["material"]][:TOP_FINDINGS]
    matching = [f for f in found if f["section"] == "data_quality"]
    # hosts whose telemetry joins no charge first, then billed GPUs without telemetry, then the rest
    matching.sort(key=lambda f: (MATCHING_ORDER.index(f["finding"]) if f["finding"] in MATCHING_ORDER else len(MATCHING_ORDER),
                                 -float(f.get("value") or 0), f.get("subject") or ""))
    return top, [f for f in decisions if f not in top], matching


def daily(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, str]:
    """Daily charts of cost (in the reporting currency) and billed GPU-hours per team (team_day),
    the largest teams by name."""
    rows = rows_as_dicts(con, "select * from team_day where month = ? order by day, team, currency", [month])
    if not rows:
        return {}
    days = sorted({r["day"] for r in rows})
    totals: dict[str, float] = {}
    for r in rows:
        totals[r["team"]] = totals.get(r["team"], 0.0) + abs(float(r["billed_cost_reporting"] or 0))
    order = sorted(totals, key=lambda t: (-totals[t], t))
    keep, rest = order[:DAILY_TEAMS], order[DAILY_TEAMS:]
    currency = next((r["reporting_currency"] for r in rows if r["reporting_currency"]), None)
    out = {}
    for key, column, unit in (("billed_cost", "billed_cost_reporting", f"{currency or ''} billed cost per day".lstrip()),
                              ("gpu_hours", "gpu_hours", "GPU-hours billed per day")):
        series = {t: [0.0] * len(days) for t in keep + ([f"{len(rest)} other teams"] if rest else [])}
        for r in rows:
            name = r["team"] if r["team"] in keep else f"{len(rest)} other teams"
            series[name][days.index(r["day"])] += float(r[column] or 0)
        series = {t: v for t, v in series.items() if any(v)}
        out[key] = charts.daily_chart_svg([d.day for d in days], series, unit) if series else ""
    return out


def top_n(teams: list[dict], key: str, n: int | None = None) -> tuple[list[str], list[float]]:
    """The n largest teams by `key`, the rest summed as one bar: 200 bars would not be readable."""
    n = n or CHART_TEAMS
    ranked = sorted(teams, key=lambda t: (-float(t[key] or 0), t["team"]))
    labels, values = [t["team"] for t in ranked[:n]], [float(t[key] or 0) for t in ranked[:n]]
    if len(ranked) > n:
        labels.append(f"{len(ranked) - n} other teams")
        values.append(sum(float(t[key] or 0) for t in ranked[n:]))
    return labels, values


def require_month(con: duckdb.DuckDBPyConnection, month: str) -> None:
    """A month's report needs the month in the marts: every monthly report (chargeback, a month's
    audit) refuses an empty month with this one error, rather than print a report of nothing."""
    check_month(month)
    if not one_row(con, "select count(*) from team_month where month = ?", [month])[0]:
        months = [r[0] for r in con.execute("select distinct month from team_month order by 1").fetchall()]
        raise InputError(f"--month {month}", "no charges or telemetry for this month",
                         f"months in the warehouse: {', '.join(months) or 'none'}",
                         "Ingest the month's billing exports first, or pick one of those months")


def exchange_rates_used(con: duckdb.DuckDBPyConnection, config: Config, month: str) -> list[dict]:
    """The month's rates into the reporting currency (fx_month), one row per rate used; stops with
    one error where the month has several billing currencies and no reporting currency, or a
    charge day has no rate."""
    rows = rows_as_dicts(con, "select * from fx_month where month = ? order by from_currency, rate_date nulls first", [month])
    billing = sorted({r["from_currency"] for r in rows})
    if any(r["reporting_currency"] is None for r in rows):
        raise InputError(f"--month {month}", "charges in several currencies", ", ".join(billing),
                         'Set the reporting currency in meterbook.toml: [currency] reporting = "USD" (and load the exchange rates)')
    missing = next((r for r in rows if r["missing_day"] is not None), None)
    if missing:
        raise InputError(f"--month {month}", f"no {missing['from_currency']} -> {missing['reporting_currency']} exchange rate",
                         f"charges of {missing['missing_day']:%Y-%m-%d}, rate rule {missing['rate_rule']}",
                         "Ingest a rates file that covers that day (ECB eurofxref-hist.csv, Fed H.10, or date,from,to,rate,source)"
                         if missing["rate_rule"] != "budget" else
                         f'Add [currency.budget_rates] "{missing["from_currency"]}" = <rate> to {config.path or "meterbook.toml"}')
    return [r for r in rows if r["from_currency"] != r["reporting_currency"]]


def build_context(con: duckdb.DuckDBPyConnection, config: Config, month: str) -> dict[str, Any]:
    """Everything the chargeback shows for a month, read from the marts the build step wrote."""
    require_month(con, month)
    teams = rows_as_dicts(con, """select * exclude (billing_currencies) from team_month_reporting where month = ?
                                  order by billed_cost desc, team""", [month])
    fx = exchange_rates_used(con, config, month)
    currency = teams[0]["currency"] or "USD"
    recon = rows_as_dicts(con, "select * from reconciliation where month = ? order by basis, invoice_id nulls last", [month])
    recon_summary = reconciliation_summary(recon)
    totals = {k: sum((t[k] or 0) for t in teams) for k in TOTAL_KEYS}
    telemetry = rows_as_dicts(con, "select * from telemetry_month where month = ?", [month])
    util, coverage_fleet = (telemetry[0]["util_mean"], telemetry[0]["scrape_coverage"]) if telemetry else (None, None)
    difference = recon_summary["invoice_difference"] + recon_summary["exports_difference"]
    ids = sorted({i for t in teams for i in (t["assumption_ids"] or [])})
    tiers = rows_as_dicts(con, """select basis, tier, it_energy_kwh from energy_tiers_month where month = ?
                                  order by it_energy_kwh desc, tier""", [month])
    unallocated = next((t for t in teams if t["team"] == config.unallocated), None)
    extra_cols = [c for c in teams[0] if c not in CSV_COLUMNS]   # columns a newer team_month adds
    lines = team_lines(con, month, currency)
    jobs = top_jobs(con, month)
    months, hist = history(con, month)
    top, found, matching = split_findings(findings(con, month))
    coverage = {r["team"]: r for r in rows_as_dicts(con, "select * from team_coverage_month where month = ?", [month])}
    no_telemetry = sorted((c for c in coverage.values() if c["gpu_hours"] > 0 and not c["has_telemetry"]),
                          key=lambda c: (-c["gpu_hours"], c["team"]))
    resources = _by_team(rows_as_dicts(con, """select * from team_resource_month where month = ?
        and (effective_cost <> 0 or billed_cost <> 0 or gpu_hours <> 0 or facility_energy_kwh <> 0)
        order by team, resource_id is null, effective_cost_reporting desc nulls last, resource_id, currency""", [month]))
    files = team_files(con, month)
    # the GHG scopes each team's CO2e falls in, by who owns the hardware (scope_month)
    scopes = _by_team(rows_as_dicts(con, """select team, ownership, electricity_scope, embodied_scope from scope_month
        where month = ? order by team, ownership""", [month])) if table_exists(con, "scope_month") else {}
    ns_days = _by_team(rows_as_dicts(con, """select * from team_namespace_day where month = ?
        order by team, day, namespace""", [month]))
    team_pages = [team_page(t, lines.get(t["team"], []), jobs.get(t["team"], []), months, hist.get(t["team"], {}))
                  | {"resources": resources.get(t["team"], []), "namespace_days": ns_days.get(t["team"], [])[:STATEMENT_DAYS],
                     "namespace_days_more": max(len(ns_days.get(t["team"], [])) - STATEMENT_DAYS, 0),
                     "coverage": coverage.get(t["team"]), "files": files.get(t["team"], []),
                     "scopes": scopes.get(t["team"], [])}
                  for t in teams]
    return {
        "month": month,
        "created": document_date(month),
        "currency": currency,
        "fx": fx,
        "teams": teams,
        "team_pages": team_pages,
        "extra_columns": extra_cols,
        "team_economics": TEAM_ECONOMICS,
        "job_economics": job_economics(con, month),
        "team_changes": TEAM_CHANGES,
        # what a newer team_month adds beyond the figures the page already names
        "other_columns": [c for c in extra_cols if c not in SPLIT_BY_CATEGORY and c != "billed_cost_prev_month"
                          and c not in {k for k, *_ in TEAM_ECONOMICS + TEAM_CHANGES}],
        "totals": totals,
        # the team rows are rounded one by one: what they miss of the rounded total, printed as a row
        "rounding": rounding_line(teams, ("billed_cost", "effective_cost")),
        "util_mean": util,
        "telemetry_coverage": coverage_fleet,
        "fleet": telemetry[0] if telemetry else None,
        "coverage": coverage,
        "no_telemetry": no_telemetry,
        "daily_charts": daily(con, month),
        "unallocated_name": config.unallocated,
        "unallocated": unallocated,
        "unallocated_lines": lines.get(config.unallocated, []),
        "sharing": sharing(con, month),
        "reconciliation": recon,
        "reconciliation_summary": recon_summary,
        "reconciliation_difference": difference,
        "findings": found,
        "top_findings": top,
        # the findings' savings in the reporting currency, each counted once (findings_ranked.saving_reporting)
        "savings": sum(float(f.get("saving_reporting") or 0) for f in top + found),
        "materiality": next((f["materiality_usd"] for f in top + found + matching), None),
        "page1_teams": PAGE1_TEAMS,
        "matching": matching[:MATCHING_ROWS],
        "matching_more": max(len(matching) - MATCHING_ROWS, 0),
        "quality": quality_summary(con, month),
        "carbon": carbon_context(con, month),
        "tiers": tiers,
        "assumptions": assumptions_used(con, ids),
        "methodology_file": methodology_file_name(),
        "provenance": provenance(con, month, config=config),
    }


def team_page(team: dict, lines: list[dict], jobs: list[dict], months: list[str], hist: dict[str, dict]) -> dict:
    trend = [{"month": m, **{k: hist[m][k] for k in ("billed_cost", "gpu_hours", "idle_gpu_hours", "co2e_kg")}}
             if m in hist else {"month": m, "billed_cost": None, "gpu_hours": None, "idle_gpu_hours": None, "co2e_kg": None}
             for m in months]
    # One month is a point, not a trend: the chart is drawn from two months on (the table always).
    chart = charts.trend_chart_svg(months, {"billed cost": [None if r["billed_cost"] is None else float(r["billed_cost"])
                                                            for r in trend]}, "billed cost", height_in=1.4) if len(months) > 1 else ""
    idle_share = (team["idle_gpu_hours"] / team["gpu_hours_observed"]) if team["gpu_hours_observed"] else None
    columns = [c for c in (lines[0] if lines else {})]
    return {"team": team, "lines": lines, "line_columns": columns, "jobs": jobs, "trend": trend,
            "trend_chart": chart, "idle_share": idle_share}


def assumptions_used(con: duckdb.DuckDBPyConnection, ids: list[str]) -> list[dict[str, Any]]:
    """The coefficient rows behind the estimates, looked up by id across the reference tables."""
    if not ids:
        return []
    tables = [r[0] for r in con.execute(
        "select table_name from information_schema.columns where column_name = 'coefficient_id' and table_name like 'ref_%'").fetchall()]
    union = " union all ".join(
        f"select coefficient_id, value, unit, low, high, source, notes from {t}" for t in sorted(tables))
    return rows_as_dicts(con, f"select * from ({union}) where coefficient_id in (select unnest(?::varchar[])) order by 1", [ids])


def _provenance_json(ctx: dict[str, Any], files: list[dict] | None = None) -> str:
    """The chargeback's provenance: every file of the month. A statement's (`files` given): only
    the files behind its team's lines. Both name a file by its name and sha256, and the config by
    its name, never a folder: the JSON reads the same wherever the inputs were kept."""
    if files is None:
        files = [{"file": Path(f["path"]).name, **{k: f[k] for k in ("sha256", "kind", "status", "rows_read", "rows_loaded",
                                                                    "rows_rejected")}}
                 for f in ctx["quality"]["file_list"]]
    return json.dumps({**ctx["provenance"], "month": ctx["month"], "source_files": files}, indent=2, default=str)


def attachments(ctx: dict[str, Any], teams: list[dict], name: str, files: list[dict] | None = None) -> dict[str, tuple[str, str]]:
    return {
        f"{name}.csv": (csv_text(teams, CSV_COLUMNS + ctx["extra_columns"]), "Per-team figures behind the tables, exact amounts"),
        "assumptions.csv": (csv_text(ctx["assumptions"], ASSUMPTION_COLUMNS), "Coefficients and assumptions the estimates used"),
        "provenance.json": (_provenance_json(ctx, files), "Warehouse hash, assumptions version, source files with sha256"),
    }


def team_files(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, list[dict]]:
    """Per team, the input files its allocation lines rest on (allocation_day's source file), by
    file name and sha256: what a statement's provenance lists."""
    rows = rows_as_dicts(con, """
        select a.team, f.path, f.sha256, f.kind, f.rows_loaded
        from (select distinct team, source_sha256 from allocation_day where month = ?) a
        join source_files f on f.sha256 = a.source_sha256 and f.status = 'loaded'
        order by a.team, f.sha256""", [month])
    return {team: [{"file": Path(f.pop("path")).name, **f} for f in files] for team, files in _by_team(rows).items()}


# Units of a finding's figure that are an amount of the resource, split like its cost when the
# resource is shared (a rate, a ratio or a payback time is the same for every payer).
SHARED_UNITS = ("h",)


def statement_findings(found: list[dict], team: str) -> list[dict]:
    """A team's findings as its statement shows them: each paying team's (findings_ranked's
    paying_teams, which follow what the finding is about: a GPU's or a pod's time, else its whole
    resource), at its share of the amounts, never naming the other payers; a finding no team is
    charged for is its own team's. The chargeback's Findings name the same payers."""
    out = []
    for f in found:
        payers = {p["team"]: p["share"] for p in f.get("paying_teams") or []}
        if payers:
            share = payers.get(team)
        else:
            share = 1.0 if team in (f.get("paying_team"), f.get("team")) else None
        if share is None:
            continue
        mine = dict(f, paying_team=team, paying_teams=[{"team": team, "share": share}])
        if share < 1:
            for k in ("cost_usd", "cost_reporting", "energy_kwh", "saving_usd", "saving_reporting") + (("value",) if f.get("unit") in SHARED_UNITS else ()):
                mine[k] = None if f.get(k) is None else f[k] * share
            mine["detail"] = f"this team's share, {round(share * 100)} % of the resource's cost. {f.get('detail') or ''}".strip()
        out.append(mine)
    return out


def statement_file(team: str) -> str:
    """A safe, unique file name for a team's statement: team names are user text (tags)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", team).strip("-.")[:40] or "team"
    return f"{slug}-{hashlib.sha256(team.encode()).hexdigest()[:8]}.pdf"


def statement_hash(ctx: dict[str, Any], page: dict[str, Any]) -> str:
    """sha256 of what a team's statement states (its figures, lines and drill-down, the inputs
    hash and config), so a printed statement can be matched to the data it came from."""
    body = {"month": ctx["month"], "inputs": ctx["provenance"]["warehouse_hash"], "config": ctx["provenance"]["config_sha256"],
            **{k: page[k] for k in ("team", "lines", "resources", "namespace_days")}}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def _statement_data(ctx: dict[str, Any]) -> None:
    """Give each team page what its statement shows besides the page: its findings, assumptions and hash."""
    everything = ctx["top_findings"] + ctx["findings"] + ctx["matching"]
    for i, page in enumerate(ctx["team_pages"]):
        name, ids = page["team"]["team"], set(page["team"]["assumption_ids"] or [])
        page["index"] = i
        page["findings"] = statement_findings(everything, name)
        page["assumptions"] = [a for a in ctx["assumptions"] if a["coefficient_id"] in ids]
        page["hash"] = statement_hash(ctx, page)


def report_html(ctx: dict[str, Any], part: str = "all", **extra: Any) -> str:
    """The HTML of the report (or of one part of it) for a build_context() context."""
    if ctx.get("team_pages") and "index" not in ctx["team_pages"][0]:
        ctx = dict(ctx, team_pages=[dict(p) for p in ctx["team_pages"]])
        _statement_data(ctx)
    return environment().get_template("chargeback.html").render(
        **{"per_team": False, **ctx, "part": part, "part_label": PART_LABELS[part], "team_count": len(ctx["teams"]), **extra})


def _html(ctx: dict[str, Any], part: str, **extra: Any):
    from weasyprint import HTML
    return HTML(string=report_html(ctx, part, **extra), base_url=str(TEMPLATES)).render()


def _sections(doc) -> dict[str | None, list]:
    """Pages by section id (team-<i>, statement-<i>); a page without an anchor continues the last."""
    out: dict[str | None, list] = {}
    current: str | None = None
    for page in doc.pages:
        ids = [a for a in page.anchors if a.startswith(("team-", "statement-"))]
        current = ids[0] if ids else current
        out.setdefault(current, []).append(page)
    return out


def _render_part(args: tuple) -> list[Path]:
    """One process: lay out a part once, write its pages for the monthly report and, for a part of
    team pages with per_team, each team's statement (its page + its statement appendix)."""
    ctx, part, pages, path, per_team, main = args
    created = ctx["created"]
    if part != "teams":
        files = attachments(ctx, ctx["teams"], "chargeback") if part in ("all", "front") else None
        return [write_pdf(_html(ctx, part), path, created, files)]
    doc = _html(ctx, part, team_pages=pages, per_team=per_team)
    sections = _sections(doc)
    written = []
    if main:
        written.append(write_pdf(doc.copy([pg for p in pages for pg in sections[f"team-{p['index']}"]]), path, created))
    if per_team:
        for p in pages:
            team = p["team"]
            sctx = {**ctx, "assumptions": p["assumptions"]}
            spath = path.parent.parent / "teams" / statement_file(team["team"])
            spath.parent.mkdir(parents=True, exist_ok=True)
            statement = doc.copy(sections[f"team-{p['index']}"] + sections[f"statement-{p['index']}"])
            # a statement is one team's: its title says which (the copy would share the report's)
            statement.metadata = copy.copy(doc.metadata)
            statement.metadata.title = f"GPU chargeback {ctx['month']} — {team['team']}"
            written.append(write_pdf(statement, spath, created, attachments(sctx, [team], "statement", p["files"])))
    return written


def _render_pool(workers: int) -> ProcessPoolExecutor:
    # Not fork: the caller holds DuckDB's worker threads and Pango/fontconfig state, and a child
    # forked while one of them held a lock crashed inside WeasyPrint's style computation (a
    # segfault under load). A fork server is a fresh process that imports the renderer once;
    # workers fork from it, so they start clean and still skip the import.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_render_worker)


# A layout allocates millions of small objects that live as long as the part does; at Python's
# default threshold (700) the cycle collector re-scans them thousands of times per part. Rarer
# young collections cut a part's CPU time by about a tenth (issue 24); each worker's garbage dies
# with the pool.
RENDER_GC_THRESHOLD = 50_000


def _render_worker() -> None:
    """A render worker: what was imported before the fork is frozen out of the collector's
    scans, and young collections come RENDER_GC_THRESHOLD allocations apart."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(RENDER_GC_THRESHOLD, *gc.get_threshold()[1:])


def write_chargeback(con: duckdb.DuckDBPyConnection, config: Config, month: str, out: Path,
                     per_team: bool = False, workers: int | None = None) -> list[Path]:
    return render_all(build_context(con, config, month), out, per_team, workers)


def render_all(ctx: dict[str, Any], out: Path, per_team: bool = False, workers: int | None = None,
               single_up_to: int | None = None) -> list[Path]:
    """chargeback.pdf, chargeback.csv and, with per_team, teams/<team>.pdf; returns their paths.

    Up to `single_up_to` teams the report is one WeasyPrint document (pages numbered "page x of y").
    Beyond, it is laid out in parts, one process per core (WeasyPrint uses one core per document):
    front matter, team pages PART_TEAMS at a time, appendix, then joined with qpdf; each team page
    is laid out once and serves both the monthly report and that team's statement.
    """
    with replacing_set(out, "chargeback", SET_MEMBERS) as stage:
        statements = _render_into(ctx, stage, per_team, workers, CHUNK_TEAMS if single_up_to is None else single_up_to)
    return [out / "chargeback.pdf", out / "chargeback.csv"] + [out / "teams" / p.name for p in statements]


def _render_into(ctx: dict[str, Any], out: Path, per_team: bool, workers: int | None, single_up_to: int) -> list[Path]:
    """render_all's files, written into `out` (a set's stage); returns the statements' paths."""
    ctx = dict(ctx)
    ctx["team_pages"] = [dict(p) for p in ctx["team_pages"]]
    _statement_data(ctx)
    csv_path = out / "chargeback.csv"
    write_text(csv_path, csv_text(ctx["teams"], CSV_COLUMNS + ctx["extra_columns"]))
    pdf = out / "chargeback.pdf"
    single = len(ctx["teams"]) <= single_up_to
    workers = workers or os.cpu_count() or 1
    pages = ctx["team_pages"]
    chunks = [pages[i:i + PART_TEAMS] for i in range(0, len(pages), PART_TEAMS)]
    slim = {k: v for k, v in ctx.items() if k != "team_pages"}
    parts = out / ".parts"
    jobs: list[tuple] = [(slim | {"team_pages": pages}, "all", [], pdf, per_team, True)] if single else \
        [(slim | {"team_pages": []}, "front", [], parts / "0-front.pdf", per_team, True)]
    if not single or per_team:
        jobs += [(slim, "teams", c, parts / f"1-teams-{i:04d}.pdf", per_team, not single) for i, c in enumerate(chunks)]
    if not single:
        jobs.append((slim | {"team_pages": []}, "appendix", [], parts / "2-appendix.pdf", per_team, True))
    parts.mkdir(exist_ok=True)
    if len(jobs) == 1:
        written = [_render_part(jobs[0])]
    else:
        with _render_pool(workers) as pool:
            # the team parts (the long ones) first, so the short front and appendix fill the
            # last gaps instead of leaving a core idle behind the last team part
            futures = {id(job): pool.submit(_render_part, job) for job in sorted(jobs, key=lambda j: j[1] != "teams")}
            written = [futures[id(job)].result() for job in jobs]
    statements = sorted(p for w in written for p in w if p.parent.name == "teams")
    if not single:
        from reports.concat import concatenate_pdfs
        concatenate_pdfs([p for w in written for p in w if p.parent == parts], pdf)
    shutil.rmtree(parts, ignore_errors=True)
    return statements
