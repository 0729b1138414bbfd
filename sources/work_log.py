"""Work logs (kind `work`): what the platform's own jobs did, one row per job or serving window.

CSV, JSON lines or Parquet with these columns (README, "Work logs"): job_id, workload
(training | serving), a placement (namespace and pod, or host and gpu_uuids), start_utc and
end_utc, params (active_params for a mixture of experts), units of work (tokens, samples,
requests), precision, and optionally gpus, gpu_model and the job's own logged throughput
(tokens_per_s). Recognised by job_id + start_utc + end_utc beside a unit of work.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import one_row
from schemas.contract import reject_sql
from schemas.work_log import WorkLog
from sources.base import Head, Reader, Staged, register
from sources.codecarbon import resolve_gpu_models
from sources.tabular import canonical_view, stage_sql

# Canonical name -> header spellings, preferred first.
ALIASES: dict[str, tuple[str, ...]] = {
    "job_id": ("job_id", "job"),
    "workload": ("workload", "kind"),
    "namespace": ("namespace",),
    "pod": ("pod",),
    "host": ("host", "hostname"),
    "gpu_uuids": ("gpu_uuids", "gpus_uuid", "uuids"),
    "gpus": ("gpus", "gpu_count"),
    "start_utc": ("start_utc", "start"),
    "end_utc": ("end_utc", "end"),
    "params": ("params", "parameters"),
    "active_params": ("active_params",),
    "tokens": ("tokens",),
    "samples": ("samples",),
    "requests": ("requests",),
    "precision": ("precision",),
    "gpu_model": ("gpu_model",),
    "tokens_per_s": ("tokens_per_s",),
}
REQUIRED = {"job_id", "workload", "start_utc", "end_utc"}
UNITS = {"tokens", "samples", "requests"}


@register
class WorkLogReader(Reader):
    kind = "work"
    table = "work_log"
    description = "work log (job_id, workload, placement, start_utc, end_utc, units of work; CSV or JSON lines)"

    def sniff(self, head: Head) -> str | None:
        cols = {c.strip().lower() for c in head.columns}
        if {"job_id", "start_utc", "end_utc"} <= cols and cols & UNITS:
            return "jsonl" if head.text.lstrip().startswith("{") else ("parquet" if head.parquet else "csv")
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        canonical_view(con, head, ALIASES, REQUIRED, "raw_work")
        rows_read = stage_sql(con, head.path, "stg_work__jobs.sql")
        resolve_gpu_models(con)
        sql = reject_sql(WorkLog, {r[0] for r in con.execute("describe _staged").fetchall()})
        if sql:
            con.execute(sql)
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or "csv")

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        jobs, windows, tokens, requests = one_row(
            con, "select count(distinct job_id), count(*), sum(tokens), sum(requests) from work_log where file_id = ?", [file_id])
        return {"jobs": jobs, "windows": windows, "tokens": float(tokens or 0), "requests": float(requests or 0)}
