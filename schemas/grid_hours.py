"""Contract of the `grid_hours` table (grain: one intensity figure of one grid-hourly data row;
an Electricity Maps row gives a direct and a life-cycle line under one row number).

Compiled to SQL by schemas.contract.reject_sql over the staged lines: a failing line rejects its
whole source row, located."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

FACTOR_TYPES = ["direct", "lifecycle", "unspecified"]


class GridHours(pa.DataFrameModel):
    zone: str = pa.Field(description="zone as the file names it")
    hour_start: pd.Timestamp = pa.Field(description="UTC start of the interval")
    factor_type: str = pa.Field(isin=FACTOR_TYPES, description="direct (combustion) or life-cycle emission factors")
    intensity_g_per_kwh: float = pa.Field(ge=0, description="gCO2e per kWh consumed")
    carbon_free_pct: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 100})
    renewable_pct: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 100})

    class Config:
        coerce = True
        strict = False
