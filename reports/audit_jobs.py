"""The audit's benchmark of the platform's own jobs against published models: facility energy and
CO2e per million tokens and MFU, the jobs' from the job_month mart, the published models' from
their reconstructed meters (the same engine and Monte Carlo batch the audit shows above)."""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import rows_as_dicts, table_exists
from core.units import G_PER_KG, TOKENS_PER_MILLION


def per_million_tokens(amount: float | None, tokens: float | None) -> float | None:
    """amount / (tokens / 10^6); None when either is unknown or no tokens were done."""
    if amount is None or not tokens:
        return None
    return amount / tokens * TOKENS_PER_MILLION


# A reconstructed meter's central value and interval bounds, and the suffix each takes here: the
# same kind of range as the own jobs' (job_month's *_low/_high)
ENDS = (("value", ""), ("bound_low", "_low"), ("bound_high", "_high"))


def published_rows(rows: list[dict[str, Any]], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per disclosure that states its training tokens: its reconstructed facility kWh and
    location-based CO2e (g) per million tokens with their interval bounds, and its MFU."""
    out = []
    for row, res in zip(rows, results):
        tokens, meters = row.get("tokens"), res["meters"]
        kwh, co2e, mfu = meters.get("facility_energy_kwh"), meters.get("co2e_location_kg"), meters.get("mfu")
        if not tokens or not (kwh or co2e):
            continue
        grams = {k: None if co2e is None or co2e[k] is None else co2e[k] * G_PER_KG for k, _ in ENDS}
        out.append({"name": row["model"], "kind": "published", "workload": "training", "tokens": tokens,
                    **{f"kwh_per_mtok{s}": per_million_tokens(kwh and kwh[k], tokens) for k, s in ENDS},
                    **{f"gco2e_per_mtok{s}": per_million_tokens(grams[k], tokens) for k, s in ENDS},
                    "mfu": mfu and mfu["value"], "status": kwh["status"] if kwh else co2e["status"]})
    return out


def job_rows(con: duckdb.DuckDBPyConnection, month: str | None) -> list[dict[str, Any]]:
    """The month's jobs that did tokens, per job and team, from the mart."""
    if month is None or not table_exists(con, "job_month"):
        return []
    return rows_as_dicts(con, """
        select job_id || case when count(*) over (partition by job_id) > 1 then ' (' || team || ')' else '' end as name,
               'own job' as kind, workload, tokens, kwh_per_mtok, kwh_per_mtok_low, kwh_per_mtok_high,
               gco2e_per_mtok, gco2e_per_mtok_low, gco2e_per_mtok_high, mfu, status
        from job_month where month = ? and kwh_per_mtok is not null
        order by workload desc, job_id, team""", [month])


def work_benchmark(con: duckdb.DuckDBPyConnection, month: str | None, rows: list[dict[str, Any]],
                   results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Own jobs first, then the published models; empty when neither has per-token figures."""
    return job_rows(con, month) + published_rows(rows, results)
