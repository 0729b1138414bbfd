"""Shared by the allocation and findings tests (no tests here): hand-built months, charges and
per-GPU-hour telemetry written straight into a fresh warehouse, then the stages from int_gpu_workloads on.

int_gpu_hours is given (not built from scrapes) so these tests pin allocation, not energy tiers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pandas as pd

from pipelines.config import Config
from pipelines.stages import apply_config, build_model, stages
from pipelines.warehouse import connect
from sources.reference_data import load_reference

MONTH = "2026-10"
M0 = datetime(2026, 10, 1)


@dataclass
class Charge:
    cost: str                            # billed cost, decimal text
    tags: dict[str, str] = field(default_factory=dict)
    resource_id: str | None = None
    service: str = "Amazon Elastic Compute Cloud"
    category: str = "Usage"              # FOCUS ChargeCategory
    account: str = "111122223333"
    gpu_hours: float | None = None
    effective: str | None = None         # effective cost, default = billed
    line_item_type: str | None = None
    commitment_id: str | None = None
    currency: str = "USD"
    start: datetime | None = None        # billing and charge period start; default the month's start


@dataclass
class GpuHour:
    host: str
    gpu: str
    hour: int                            # hours after the month start
    energy_kwh: float
    util: float
    pods: dict[str | None, int]          # namespace (None = idle) -> scrapes in the hour
    instance_id: str | None = None       # the series' cloud instance id label
    tensor: float | None = None          # DCGM tensor-pipe activity, 0-1
    # how the GPU is shared (int_gpu_shares): "whole" (pods one after another), "mig" (each
    # namespace on its own instance of `profiles`), "time_sliced" (pods at once, vgpu labels),
    # "fractional" (pods at once, each requesting `percent` of the GPU's cores, HAMi)
    mode: str = "whole"
    profiles: dict[str, str] = field(default_factory=dict)        # namespace -> MIG profile (A100-SXM4-40GB)
    percent: dict[str, float] = field(default_factory=dict)       # namespace -> nvidia.com/gpucores
    activity: dict[str, float] = field(default_factory=dict)      # namespace -> GR_ENGINE_ACTIVE, 0-1


def pod_rows(h: GpuHour) -> list[dict]:
    """gpu_pod_parts rows of one GPU-hour, as the staging writes them for its mode."""
    start = M0 + timedelta(hours=h.hour)
    rows = []
    for i, (ns, n) in enumerate(h.pods.items()):
        at_once = h.mode in ("time_sliced", "fractional")
        # pods one after another hold disjoint stretches of the hour; pods at once, all of it
        first = start + (timedelta(0) if at_once else timedelta(minutes=i * 10))
        last = start + (timedelta(minutes=59) if at_once else timedelta(minutes=i * 10 + 9))
        rows.append({"file_id": 1, "gpu_uuid": h.gpu, "hour_start": start, "namespace": ns or "",
                     "pod": (ns + "-0") if ns else "", "container": "", "n_scrapes": n,
                     "mig_instance": str(i + 1) if h.mode == "mig" and ns in h.profiles else None,
                     "mig_profile": h.profiles.get(ns) if h.mode == "mig" and ns else None,
                     "vgpu": str(i) if h.mode == "time_sliced" and ns else None,
                     "gr_active_sum": h.activity[ns] * n if ns in h.activity else None,
                     "n_gr_active": n if ns in h.activity else None, "first_ts": first, "last_ts": last})
    return rows


def request_rows(h: GpuHour) -> list[dict]:
    """gpu_request_parts rows: a fractional GPU's HAMi requests."""
    if h.mode != "fractional":
        return []
    return [{"file_id": 2, "hour_start": M0 + timedelta(hours=h.hour), "namespace": ns, "pod": ns + "-0", "container": "main",
             "node": h.host, "resource": "nvidia.com/gpucores", "kind": "request", "value_sum": pct, "n_samples": 1}
            for ns, pct in h.percent.items() if ns in h.pods]


def insert_charges(con: duckdb.DuckDBPyConnection, charges: list[Charge]) -> None:
    """The charges as billing rows of file 1, straight into the warehouse."""
    for i, c in enumerate(charges):
        con.execute("""insert into charges (file_id, row_number, provider, billing_account_id, sub_account_id,
            billing_period_start, charge_period_start, charge_category, line_item_type, service_name, resource_id,
            region, commitment_discount_id, billed_cost, effective_cost, list_cost, billing_currency, tags,
            gpu_model, gpu_count, gpu_hours)
            values (1, ?, 'AWS', ?, ?, ?, ?, ?, ?, ?, ?, 'us-east-1', ?, ?::decimal(38, 12), ?::decimal(38, 12),
                    ?::decimal(38, 12), ?, ?::map(varchar, varchar), ?, ?, ?)""",
                    [i + 1, c.account, c.account, c.start or M0, c.start or M0, c.category, c.line_item_type, c.service, c.resource_id,
                     c.commitment_id, c.cost, c.effective or c.cost, c.cost, c.currency, c.tags,
                     "A100-SXM4-40GB" if c.gpu_hours else None, 1.0 if c.gpu_hours else None, c.gpu_hours])


def build(tmp: Path, charges: list[Charge], hours: list[GpuHour], config: Config) -> duckdb.DuckDBPyConnection:
    con = connect(tmp / "wh.duckdb")
    insert_charges(con, charges)
    gh = pd.DataFrame([{"host": h.host, "gpu_uuid": h.gpu, "gpu_index": "0", "gpu_model_raw": "NVIDIA A100-SXM4-40GB",
                        "instance_id": h.instance_id, "hour_start": M0 + timedelta(hours=h.hour), "energy_kwh": h.energy_kwh,
                        "energy_tier": "counter", "power_w_mean": None, "util_mean": h.util, "sm_active_mean": None,
                        "tensor_active_mean": h.tensor, "coverage": 1.0, "n_scrapes": sum(h.pods.values())} for h in hours],
                      columns=["host", "gpu_uuid", "gpu_index", "gpu_model_raw", "instance_id", "hour_start", "energy_kwh",
                               "energy_tier", "power_w_mean", "util_mean", "sm_active_mean", "tensor_active_mean",
                               "coverage", "n_scrapes"])
    pods = pd.DataFrame([r for h in hours for r in pod_rows(h)],
                        columns=["file_id", "gpu_uuid", "hour_start", "namespace", "pod", "container", "n_scrapes", "mig_instance",
                                 "mig_profile", "vgpu", "gr_active_sum", "n_gr_active", "first_ts", "last_ts"])
    requests = pd.DataFrame([r for h in hours for r in request_rows(h)],
                            columns=["file_id", "hour_start", "namespace", "pod", "container", "node", "resource", "kind",
                                     "value_sum", "n_samples"])
    con.register("_gh", gh)
    con.execute("""create or replace table int_gpu_hours as select host::varchar as host, gpu_uuid::varchar as gpu_uuid,
        gpu_index::varchar as gpu_index, gpu_model_raw::varchar as gpu_model_raw, instance_id::varchar as instance_id,
        hour_start::timestamp as hour_start, hour_start::timestamp as share_hour, energy_kwh::double as energy_kwh,
        energy_kwh::double as energy_kwh_low, energy_kwh::double as energy_kwh_high, 0.0 as estimated_kwh, 0.0 as gap_kwh,
        0.0 as excess_kwh, null::double as board_max_kwh, energy_tier::varchar as energy_tier, false as has_gap, 0.0 as gap_s,
        power_w_mean::double as power_w_mean, util_mean::double as util_mean, sm_active_mean::double as sm_active_mean,
        tensor_active_mean::double as tensor_active_mean, coverage::double as coverage, coverage::double as energy_coverage,
        n_scrapes::bigint as n_scrapes from _gh""")
    if len(pods):
        con.register("_pods", pods)
        con.execute("insert into gpu_pod_parts by name select * from _pods")
    if len(requests):
        con.register("_requests", requests)
        con.execute("insert into gpu_request_parts by name select * from _requests")
    run_after_gpu_hours(con, config)
    return con


def run_after_gpu_hours(con: duckdb.DuckDBPyConnection, config: Config) -> None:
    load_reference(con)
    apply_config(con, config)
    for model in stages():
        if model.name != "int_gpu_hours":
            build_model(con, model)


def team_amounts(con: duckdb.DuckDBPyConnection, meter: str = "billed_cost") -> dict[str, Decimal]:
    return dict(con.execute("select team, sum(amount) from allocation_lines where meter = ? group by team", [meter]).fetchall())


def lines(con: duckdb.DuckDBPyConnection, meter: str = "billed_cost") -> set[tuple[str, str, Decimal]]:
    return set(con.execute("select team, rule, sum(amount) from allocation_lines where meter = ? group by all", [meter]).fetchall())
