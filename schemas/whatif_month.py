"""Contract of `whatif_month` (grain: month x lever x scenario x subject [x zone]): the month's
measured GPU-hours replayed under one lever at a time, as deltas against what happened
(negative: a saving), each between its bounds."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH

LEVERS = ["region", "shift", "utilization", "spot", "scaling"]
REL = 1e-9


class WhatifMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    lever: str = pa.Field(isin=LEVERS)
    scenario: str = pa.Field(description="the lever's setting: a target zone, a window, a target utilization ...")
    subject: str = pa.Field(description="a billed resource, a job (namespace/pod) or a CodeCarbon project")
    zone: str = pa.Field(nullable=True)
    cost_usd_delta: float = pa.Field(nullable=True, description="billing currency")
    energy_kwh_delta: float = pa.Field(nullable=True, description="facility energy")
    co2e_kg_delta: float = pa.Field(nullable=True, description="location-based, hour by hour where a series gives it")
    detail: str = pa.Field(nullable=True)

    class Config:
        coerce = True
        strict = False
        unique = ["month", "lever", "scenario", "subject", "zone"]

    @pa.dataframe_check(columns=["cost_usd_delta_low", "cost_usd_delta", "cost_usd_delta_high",
                                 "energy_kwh_delta_low", "energy_kwh_delta", "energy_kwh_delta_high",
                                 "co2e_kg_delta_low", "co2e_kg_delta", "co2e_kg_delta_high"])
    def deltas_within_bounds(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        ok = pd.Series(True, index=df.index)
        for low, mid, high in zip(columns[0::3], columns[1::3], columns[2::3]):
            tol = REL * (df[low].abs() + df[high].abs()).fillna(0) + REL
            ok &= df[mid].isna() | ((df[low] <= df[mid] + tol) & (df[mid] <= df[high] + tol))
        return ok
