"""Contract of `cluster_job_month` (grain: month x owned cluster x Slurm job x team): an owned
cluster's jobs as the allocation gave them to their teams."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class ClusterJobMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    cluster: str = pa.Field(description="the [[clusters]] entry the job ran on")
    job_id: str = pa.Field(description="sacct's JobID (an array task's is <job>_<task>)")
    team: str = pa.Field(description="from the Slurm account ([teams.accounts]), else the unallocated name")
    account: str = pa.Field(nullable=True, description="Slurm account")
    user_name: str = pa.Field(nullable=True)
    job_name: str = pa.Field(nullable=True)
    currency: str = pa.Field(nullable=True, description="the cost pool's currency")
    gpu_hours: float = pa.Field(ge=0, description="GPU-hours the job held: its GPUs x its window in the month (accounting)")
    gpu_hours_observed: float = pa.Field(ge=0, description="the part of them telemetry saw")
    it_energy_kwh: float = pa.Field(ge=0, description="its GPUs' IT energy, measured or estimated")
    util_mean: float = pa.Field(nullable=True, ge=0, description="effective / observed GPU-hours; null where none was read")
    effective_cost: float = pa.Field(description="its share of the cost pool")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "cluster", "job_id", "team"]
