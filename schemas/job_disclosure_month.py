"""Contract of `job_disclosure_month` (grain: month x job): a job's compute, energy and CO2e as a
model disclosure states them (AI Act Annex XI, SPDX 3 AI, CycloneDX 1.6, SCI). Ranges are
interval bounds, so low <= value <= high; the figures are job_month's summed over its teams."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH
from schemas.job_month import SLACK, STATUSES
from schemas.work_log import WORKLOADS


class JobDisclosureMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    job_id: str = pa.Field(description="the work log's job id")
    workload: str = pa.Field(isin=WORKLOADS)
    energy_tier: str = pa.Field(isin=STATUSES, description="measured, estimated or uncovered (job_month status)")
    gpu_hours: float = pa.Field(ge=0)
    work_flops: float = pa.Field(nullable=True, ge=0, description="FLOPs per parameter and token x active parameters x tokens")
    wall_clock_h: float = pa.Field(nullable=True, ge=0, description="hours of the job's windows in the month")
    facility_energy_kwh: float = pa.Field(ge=0)
    facility_energy_kwh_low: float = pa.Field(ge=0)
    facility_energy_kwh_high: float = pa.Field(ge=0)
    co2e_kg: float = pa.Field(ge=0, description="location-based")
    co2e_kg_low: float = pa.Field(ge=0)
    co2e_kg_high: float = pa.Field(ge=0)
    co2e_hourly_kg: float = pa.Field(ge=0, description="location-based, hour by hour where a series gives it (SCI's O)")
    co2e_hourly_kg_low: float = pa.Field(ge=0)
    co2e_hourly_kg_high: float = pa.Field(ge=0)
    facility_energy_kwh_hourly: float = pa.Field(ge=0, description="facility energy with an hourly grid factor")
    pue: float = pa.Field(nullable=True, ge=1, description="facility over IT energy: the PUE assumed for its zones")
    pue_low: float = pa.Field(nullable=True, ge=1)
    pue_high: float = pa.Field(nullable=True, ge=1)
    energy_provider: str = pa.Field(nullable=True, description="the provider billing rented or colocated GPUs; null: unknown")
    embodied_co2e_kg: float = pa.Field(ge=0, description="GPU embodied CO2e amortized over the GPU-hours (SCI M)")
    embodied_co2e_kg_low: float = pa.Field(ge=0)
    embodied_co2e_kg_high: float = pa.Field(ge=0)
    ownership: str = pa.Field(nullable=True, description="who owns the GPUs it ran on (int_resource_ownership); null: no GPU time")
    electricity_scope: str = pa.Field(nullable=True, description="GHG Protocol scope of its electricity")
    embodied_scope: str = pa.Field(nullable=True, description="GHG Protocol scope of its embodied CO2e")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "job_id"]

    energy_range = SLACK.check("energy_range", "facility_energy_kwh")

    co2e_range = SLACK.check("co2e_range", "co2e_kg")

    co2e_hourly_range = SLACK.check("co2e_hourly_range", "co2e_hourly_kg")

    pue_range = SLACK.check("pue_range", "pue")

    embodied_range = SLACK.check("embodied_range", "embodied_co2e_kg")
