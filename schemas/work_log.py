"""Contract of the `work_log` table (grain: one job or serving window = one data row of one work
log file). Compiled to SQL by schemas.contract.reject_sql: a failing row becomes a located reject.
Checks across columns (end after start, a placement, a unit of work, active <= total parameters,
one row per job window) are in the staging model, stg_work__jobs.sql."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

WORKLOADS = ["training", "serving"]
# The precisions gpu_specs.csv gives a dense peak for (metric peak_flops_<precision>).
PRECISIONS = ["fp32", "tf32", "bf16", "fp16", "fp8"]


class WorkLog(pa.DataFrameModel):
    row_number: int = pa.Field(ge=1, unique=True, description="1-based data row in the source file")
    job_id: str = pa.Field(description="the job's id as the platform names it")
    workload: str = pa.Field(isin=WORKLOADS, description="training (6N FLOPs per token) or serving (2N)")
    start_utc: pd.Timestamp = pa.Field(description="start of the window, UTC")
    end_utc: pd.Timestamp = pa.Field(description="end of the window, UTC (exclusive)")
    gpus: float = pa.Field(nullable=True, gt=0, description="GPUs the job held, for a host without telemetry")
    params: float = pa.Field(nullable=True, gt=0, description="model parameters")
    active_params: float = pa.Field(nullable=True, gt=0, description="parameters active per token (MoE)")
    tokens: float = pa.Field(nullable=True, ge=0, description="training tokens, or tokens served")
    samples: float = pa.Field(nullable=True, ge=0)
    requests: float = pa.Field(nullable=True, ge=0)
    precision: str = pa.Field(nullable=True, isin=PRECISIONS, description="the precision MFU is measured against")
    tokens_per_s: float = pa.Field(nullable=True, ge=0, description="the job's own logged throughput")

    class Config:
        coerce = True
        strict = False
