"""Contracts of `job_month` (grain: month x job x team x currency) and `team_work_month` (month x
team x workload x currency): the platform's own jobs' cost, energy and CO2e per unit of work.

Ranges are interval bounds (facility energy and CO2e over PUE, intensity and power assumptions;
MFU over the GPU's peak range), so low <= value <= high wherever both ends are known. MFU above 1
cannot happen for a true work log: the contract finding that follows names a job whose tokens,
parameters or placement are wrong (a finding, not a failed build)."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import ISO_4217, MONTH
from schemas.ranges import REL, Slack
from schemas.team_month import ROUNDING_SLACK
from schemas.work_log import WORKLOADS

STATUSES = ["measured", "estimated", "uncovered"]

# each side checked where both ends are known; a relative slack for the per-unit figures (shares
# of rounded allocation lines divided by small unit counts)
SLACK = Slack(absolute=ROUNDING_SLACK, relative=REL, open_ends=True)


class _UnitEconomics(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    workload: str = pa.Field(isin=WORKLOADS)
    currency: str = pa.Field(nullable=True, str_matches=ISO_4217, description="null: no cost reached the job")
    gpu_hours: float = pa.Field(ge=0, description="GPU-hours the jobs took (telemetry, else billed: estimated)")
    gpu_hours_estimated: float = pa.Field(ge=0, description="the part from billed hours with no telemetry")
    tokens: float = pa.Field(nullable=True, ge=0)
    requests: float = pa.Field(nullable=True, ge=0)
    samples: float = pa.Field(nullable=True, ge=0)
    mfu: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1},
                          description="work FLOPs / (GPU-seconds x dense peak); above 1 the work log is wrong")
    mfu_low: float = pa.Field(nullable=True, ge=0)
    mfu_high: float = pa.Field(nullable=True, ge=0)
    effective_cost: float = pa.Field(description="the jobs' share of the team's allocated effective cost")
    facility_energy_kwh: float = pa.Field(ge=0)
    co2e_kg: float = pa.Field(ge=0, description="location-based")
    cost_per_mtok: float = pa.Field(nullable=True, description="effective cost per million tokens")
    kwh_per_mtok: float = pa.Field(nullable=True, ge=0, description="facility kWh per million tokens")
    kwh_per_mtok_low: float = pa.Field(nullable=True, ge=0)
    kwh_per_mtok_high: float = pa.Field(nullable=True, ge=0)
    gco2e_per_mtok: float = pa.Field(nullable=True, ge=0, description="g CO2e (location-based) per million tokens")
    gco2e_per_mtok_low: float = pa.Field(nullable=True, ge=0)
    gco2e_per_mtok_high: float = pa.Field(nullable=True, ge=0)
    cost_per_k_requests: float = pa.Field(nullable=True)
    kwh_per_k_requests: float = pa.Field(nullable=True, ge=0)
    gco2e_per_k_requests: float = pa.Field(nullable=True, ge=0)

    class Config:
        coerce = True
        strict = False

    mfu_range = SLACK.check("mfu_range", "mfu", "the peak's range bounds MFU (the highest peak gives the lowest MFU)")

    kwh_per_mtok_range = SLACK.check("kwh_per_mtok_range", "kwh_per_mtok")

    gco2e_per_mtok_range = SLACK.check("gco2e_per_mtok_range", "gco2e_per_mtok")


class JobMonth(_UnitEconomics):
    job_id: str = pa.Field(description="the work log's job id")
    status: str = pa.Field(isin=STATUSES, description="estimated: billed GPU-hours or estimated energy in it")
    gpus: int = pa.Field(ge=0, description="distinct GPUs telemetry saw the job on (0 for billed hours)")
    params: float = pa.Field(nullable=True, gt=0)
    active_params: float = pa.Field(nullable=True, gt=0)
    tensor_active_mean: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1},
                                         description="DCGM tensor-pipe activity over the job's GPU-hours")
    facility_energy_kwh_low: float = pa.Field(ge=0)
    facility_energy_kwh_high: float = pa.Field(ge=0)
    co2e_kg_low: float = pa.Field(ge=0)
    co2e_kg_high: float = pa.Field(ge=0)
    co2e_hourly_kg: float = pa.Field(ge=0, description="location-based, hour by hour where a series gives it (SCI's O)")
    co2e_hourly_kg_low: float = pa.Field(ge=0)
    co2e_hourly_kg_high: float = pa.Field(ge=0)
    facility_energy_kwh_hourly: float = pa.Field(ge=0, description="facility energy with an hourly grid factor")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "job_id", "team", "currency"]

    facility_energy_range = SLACK.check("facility_energy_range", "facility_energy_kwh")

    co2e_range = SLACK.check("co2e_range", "co2e_kg")

    co2e_hourly_range = SLACK.check("co2e_hourly_range", "co2e_hourly_kg")


class TeamWorkMonth(_UnitEconomics):
    jobs: int = pa.Field(ge=1, description="jobs of the work log with this team and workload")
    busy_gpu_hours: float = pa.Field(nullable=True, ge=0, description="the team's observed busy GPU-hours (workload_month)")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team", "workload", "currency"]
