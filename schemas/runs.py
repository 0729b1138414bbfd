"""Contract of the `runs` table (grain: one data row of one emissions file: a run, or one snapshot
of a run's running totals, which CodeCarbon's append mode writes at every flush; run_key names
the run, and run_month counts each once, by its last snapshot).

Compiled to SQL by schemas.contract.reject_sql for file-sized inputs; a failing row becomes a
located reject. Energies are kWh with the run's PUE already applied by CodeCarbon.
"""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

TIMEZONE_BASES = ["offset_in_timestamp", "option", "region", "region_multizone", "country", "country_multizone", "assumed_utc"]


class Runs(pa.DataFrameModel):
    row_number: int = pa.Field(ge=1, unique=True, description="1-based data row in the source file")
    run_key: str = pa.Field(nullable=True, description="the run this row is a snapshot of: run_id with project and "
                                                         "hardware, or the row's content without run_id")
    end_utc: pd.Timestamp = pa.Field(description="end of the run, UTC (CodeCarbon's naive local timestamp converted)")
    start_utc: pd.Timestamp = pa.Field(nullable=True, description="end_utc - duration_s")
    duration_s: float = pa.Field(ge=0, description="tracked wall time, s")
    energy_kwh: float = pa.Field(ge=0, description="energy_consumed: cpu + gpu + ram, PUE applied, kWh")
    emissions_kg: float = pa.Field(ge=0, description="kg CO2e (location-based, CodeCarbon's grid factor)")
    cpu_energy_kwh: float = pa.Field(nullable=True, ge=0)
    gpu_energy_kwh: float = pa.Field(nullable=True, ge=0)
    ram_energy_kwh: float = pa.Field(nullable=True, ge=0)
    emissions_rate_kg_per_s: float = pa.Field(nullable=True, ge=0)
    cpu_power_w: float = pa.Field(nullable=True, ge=0, description="mean over the run, W")
    gpu_power_w: float = pa.Field(nullable=True, ge=0)
    ram_power_w: float = pa.Field(nullable=True, ge=0)
    gpu_count: float = pa.Field(nullable=True, ge=0, description="CodeCarbon gpu_count (from gpu_ids when given)")
    gpu_count_in_model: float = pa.Field(nullable=True, ge=0, description="N of 'N x NAME' in gpu_model")
    pue: float = pa.Field(nullable=True, ge=1, description="already applied by CodeCarbon; kept, not re-applied")
    timezone_basis: str = pa.Field(isin=TIMEZONE_BASES, description="how the naive local timestamp's zone was chosen")

    class Config:
        coerce = True
        strict = False
