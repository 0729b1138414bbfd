"""Unit economics of the work log's jobs for the chargeback's team pages and statements, read
from the job_month_reporting and team_work_month marts (the build step computes every figure):
a job's money in the reporting currency, its billed amount and currency beside it."""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import rows_as_dicts, table_exists

JOB_COLUMNS = ("job_id", "workload", "status", "gpu_models", "gpus", "gpu_hours", "gpu_hours_estimated", "tokens",
               "requests", "samples", "mfu", "mfu_low", "mfu_high", "mfu_logged", "tensor_active_mean",
               "effective_cost", "effective_cost_idle", "effective_cost_other", "facility_energy_kwh",
               "cost_per_mtok", "kwh_per_mtok", "kwh_per_mtok_low", "kwh_per_mtok_high", "gco2e_per_mtok",
               "gco2e_per_mtok_low", "gco2e_per_mtok_high", "cost_per_k_requests", "kwh_per_k_requests",
               "gco2e_per_k_requests", "cost_per_k_samples", "kwh_per_k_samples", "gco2e_per_k_samples",
               "currency")
# the job tables print money in the reporting currency (job_month_reporting), the billed amount beside it
REPORTING = ("effective_cost", "effective_cost_idle", "effective_cost_other", "cost_per_mtok", "cost_per_k_requests",
             "cost_per_k_samples")
TEAM_JOB_ROWS = 15      # jobs listed on a team page, largest cost first; the rest are counted


def job_economics(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, dict[str, Any]]:
    """Per team: its jobs (largest cost first) and its totals per workload. A warehouse built
    before work logs existed has neither mart: no section then."""
    if not table_exists(con, "job_month_reporting"):
        return {}
    out: dict[str, dict[str, Any]] = {}
    columns = [f"{c}_reporting as {c}" if c in REPORTING else c for c in JOB_COLUMNS]
    jobs = rows_as_dicts(con, f"""select team, {', '.join(columns)}, effective_cost as effective_cost_billed
                                  from job_month_reporting
                                  where month = ? and gpu_hours > 0 or (month = ? and status = 'uncovered')
                                  order by team, effective_cost_reporting desc nulls last, job_id""", [month, month])
    for r in jobs:
        team = out.setdefault(r.pop("team"), {"jobs": [], "totals": [], "more": 0})
        if len(team["jobs"]) < TEAM_JOB_ROWS:
            team["jobs"].append(r)
        else:
            team["more"] += 1
    # a workload's totals alike: per unit in the reporting currency, the billed cost beside it
    totals = ("effective_cost", "cost_per_mtok", "cost_per_k_requests")
    for r in rows_as_dicts(con, f"""select * exclude (month, {', '.join(totals)}, {', '.join(f'{c}_reporting' for c in totals)}),
                                          {', '.join(f'{c}_reporting as {c}' for c in totals)}, effective_cost as effective_cost_billed
                                   from team_work_month where month = ? and gpu_hours > 0
                                   order by team, workload, currency""", [month]):
        out.setdefault(r.pop("team"), {"jobs": [], "totals": [], "more": 0})["totals"].append(r)
    return out
