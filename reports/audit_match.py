"""Which of the audit's entities sit inside another: a published training run, or a CodeCarbon
run, matched to the host (and so the team) it ran on, so the organisation total counts its
energy once, and a measurement replaces an estimate.

Matching reads host_workload_month (one row per host and Kubernetes namespace: GPU model, GPU
count, window, observed GPU-hours, measured energy, zone). A candidate host must have the GPU
model the run names and, where both are known, the same grid zone; then
- a disclosure (no dates): its accelerator-hours equal the workload's observed GPU-hours within
  the disclosure's printed precision or MATCH_HOURS_TOLERANCE, and its accelerator count fits
  the GPUs the workload held;
- a CodeCarbon run: its window lies inside the workload's, and its GPU count fits.
Where several candidates remain, a project named like the workload's namespace or team decides.
One candidate is a match; none or several is said so, and the entity is left out of the total
(never added a second time).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import duckdb

from core.sql import one_row, rows_as_dicts, table_exists
from pipelines.reconstruct import resolve_gpu
from reports.render import number

# Observed GPU-hours fall short of billed hours by the scrape gaps at a run's edges (a 30 s
# scrape interval loses under a minute per GPU); a disclosure printed as '192' is exact to 0.5 h.
MATCH_HOURS_TOLERANCE = 0.01


def host_workloads(con: duckdb.DuckDBPyConnection, month: str) -> list[dict[str, Any]]:
    if not table_exists(con, "host_workload_month"):
        return []
    return rows_as_dicts(con, "select * from host_workload_month where month = ? order by host, namespace", [month])


def _result(candidates: list[dict], project: str | None, what: str, unmatched: str) -> dict[str, Any]:
    if len(candidates) > 1 and project:
        named = [w for w in candidates if project.casefold() in (w["namespace"].casefold(), w["team"].casefold())]
        candidates = named or candidates
    if len(candidates) == 1:
        w = candidates[0]
        return {"status": "matched", "host": w["host"], "team": w["team"], "namespace": w["namespace"],
                "gpu_hours": w["gpu_hours"], "it_energy_kwh": w["it_energy_kwh"], "gpus": w["gpus"],
                "window": (w["first_hour"], w["end_hour"]), "reason": what}
    if candidates:
        hosts = ", ".join(sorted({f"{w['host']} ({w['team']})" for w in candidates}))
        return {"status": "ambiguous", "reason": f"several hosts fit ({hosts}); not added to the total, as it "
                "cannot be told which team's figure holds it"}
    return {"status": "not matched", "reason": unmatched}


def _same_zone(zone: str | None, w: Mapping[str, Any]) -> bool:
    return not zone or not w["zone"] or zone.casefold() == w["zone"].casefold()


def match_disclosure(d: Mapping[str, Any], workloads: list[dict]) -> dict[str, Any]:
    """A disclosure row (accelerator, accelerator_count, accelerator_hours or training_days,
    location) against the month's host workloads."""
    gpu = resolve_gpu(d.get("accelerator") or "")
    hours = d.get("accelerator_hours")
    if hours is None and d.get("accelerator_count") and d.get("training_days"):
        hours = d["accelerator_count"] * d["training_days"] * 24.0
    if gpu is None or not hours:
        return {"status": "not matched", "reason": "the disclosure gives no accelerator model and hours to match "
                "against the organisation's hosts; not in the total"}
    count = d.get("accelerator_count") or 0
    tolerance = max(MATCH_HOURS_TOLERANCE * hours, 0.5)
    candidates = [w for w in workloads if w["gpu_model"] == gpu and _same_zone(d.get("location"), w)
                  and abs(w["gpu_hours"] - hours) <= tolerance and w["gpus"] >= count]
    return _result(candidates, None, f"same accelerator ({gpu}), zone and {number(hours)} accelerator-hours as the "
                   "workload's observed GPU-hours",
                   f"no host of the organisation ran {number(hours)} {gpu} accelerator-hours in the period; "
                   "outside the boundary, not in the total")


def match_run(run: Mapping[str, Any], workloads: list[dict]) -> dict[str, Any]:
    """A CodeCarbon run (start_utc, end_utc, gpu_model, gpu_count, project, cloud zone) against
    the month's host workloads."""
    start, end = run["start_utc"], run["end_utc"]
    zone = f"{run['cloud_provider']}:{run['cloud_region']}" if run.get("cloud_provider") and run.get("cloud_region") else None
    gpus = run.get("gpu_count") or 0
    candidates = [w for w in workloads if run.get("gpu_model") and w["gpu_model"] == run["gpu_model"]
                  and _same_zone(zone, w) and _inside(start, end, w) and w["gpus"] >= gpus]
    return _result(candidates, run.get("project"), f"same GPU model ({run.get('gpu_model')}), zone and a window inside "
                   "the workload's",
                   "no host telemetry saw a workload on its GPU model during its window; not added (its "
                   "energy may already sit in a team's estimated GPU-hours)")


def _inside(start: datetime | None, end: datetime, w: Mapping[str, Any]) -> bool:
    return start is not None and w["first_hour"] <= start and end <= w["end_hour"]


def window_energy_kwh(con: duckdb.DuckDBPyConnection, host: str, namespace: str, start: datetime, end: datetime) -> float:
    """GPU board energy telemetry measured for one workload during a window, each hour counted by
    the share of it the window covers (a run's own measurement is checked against this)."""
    (kwh,) = one_row(con, """
        select coalesce(sum(w.it_energy_kwh * greatest(0, epoch(least(w.hour_start + interval 1 hour, $end))
                                                            - epoch(greatest(w.hour_start, $start))) / 3600.0), 0)
        from host_workload_hours w
        where w.host = $host and w.namespace = $namespace
          and w.hour_start < $end and w.hour_start + interval 1 hour > $start""",
                     {"host": host, "namespace": namespace, "start": start, "end": end})
    return float(kwh)
