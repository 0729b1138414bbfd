"""Contract of the `charges` table (grain: one billing line item of one source file)."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

CHARGE_CATEGORIES = ["Usage", "Purchase", "Tax", "Credit", "Adjustment"]


class Charges(pa.DataFrameModel):
    row_number: int = pa.Field(ge=1, description="1-based data row in the source file (shared by its credit lines)")
    charge_period_start: pd.Timestamp = pa.Field(description="UTC, inclusive")
    charge_period_end: pd.Timestamp = pa.Field(nullable=True, description="UTC, exclusive")
    charge_category: str = pa.Field(isin=CHARGE_CATEGORIES, description="FOCUS ChargeCategory")
    billed_cost: float = pa.Field(description="invoice (cash) basis, billing currency; negative for credits")
    effective_cost: float = pa.Field(nullable=True, description="amortized cost after commitments")
    list_cost: float = pa.Field(nullable=True)
    billing_currency: str = pa.Field(str_matches=r"[A-Z]{3}", description="ISO 4217")
    consumed_quantity: float = pa.Field(nullable=True)
    gpu_count: float = pa.Field(nullable=True, gt=0)
    gpu_hours: float = pa.Field(nullable=True, description="consumed hours x GPUs per instance; negative on corrections")

    class Config:
        coerce = True
        strict = False
