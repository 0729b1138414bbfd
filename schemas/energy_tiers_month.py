"""Contract of `energy_tiers_month` (grain: month x basis x tier): where the month's IT energy
comes from, measured by telemetry tier or estimated."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH
from schemas.int_gpu_hours import ENERGY_TIERS

ESTIMATED_TIERS = ["gap_estimate", "tdp_model"]
# a Slurm job no telemetry reaches: its DCGM job statistics (measured), else Slurm's node energy
JOB_RECORD_TIERS = ["dcgm_job_stats", "slurm_node_energy"]


class EnergyTiersMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    basis: str = pa.Field(isin=["measured", "estimated"])
    tier: str = pa.Field(isin=ENERGY_TIERS + ESTIMATED_TIERS + JOB_RECORD_TIERS)
    it_energy_kwh: float = pa.Field(ge=0, description="IT energy of the GPU boards")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "basis", "tier"]
