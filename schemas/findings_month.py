"""Contract of `findings_month` (grain: month x finding x subject). The finding names and units
are those findings_month.sql writes; value, low and high are in `unit`, and may be negative
(a GPU-hours or energy gap) or null (owned_break_even: never pays back)."""
from __future__ import annotations

import re

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH

FINDINGS = ["low_utilization", "idle_gpu_hours", "commitment_candidate", "spot_candidate", "owned_break_even",
            "gpu_hours_gap", "unmatched_host", "unobserved_resource", "energy_gap", "scaling_efficiency",
            "energy_above_board", "telemetry_gap", "invoice_difference", "low_mfu", "instrument_overclaimed",
            "instrument_unmatched", "instrument_duplicate", "market_factor_missing", "commitment_unused",
            "provider_split_differs", "telemetry_interval", "supplier_factor_unmatched"]
UNITS = ["h", "fraction of month", "preemptions/h", "months", "kWh", "fraction"]
# money findings (invoice_difference) are in their ISO 4217 currency
UNIT = rf"^({'|'.join(re.escape(u) for u in UNITS)}|[A-Z]{{3}})$"


class FindingsMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    finding: str = pa.Field(isin=FINDINGS)
    subject: str = pa.Field(nullable=True, description="what the finding is about: a GPU, resource, host, run, project")
    unit: str = pa.Field(str_matches=UNIT)
    value: float = pa.Field(nullable=True)
    low: float = pa.Field(nullable=True)
    high: float = pa.Field(nullable=True)
    cost_usd: float = pa.Field(nullable=True, description="spend concerned, or saving; sign free")
    energy_kwh: float = pa.Field(nullable=True, ge=0, description="measured energy concerned")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "finding", "subject"]

    @pa.dataframe_check(columns=["low", "value", "high"])
    def value_within_its_range(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        """low and high come from the coefficients' bounds; each side is checked where both ends
        are known (a break-even bound is null where it never pays back)."""
        tol = 1e-9 * df["value"].abs()
        low_ok = df["low"].isna() | df["value"].isna() | (df["low"] <= df["value"] + tol)
        high_ok = df["high"].isna() | df["value"].isna() | (df["value"] <= df["high"] + tol)
        return low_ok & high_ok
