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
    # A code, not necessarily ISO 4217: test and sandbox exports carry placeholders (koku's Azure
    # fixture bills in "MC"). Rejecting them would drop the rows' money; a code not shaped like
    # ISO 4217 is a finding instead (currency_not_iso4217), and totals stay per currency.
    billing_currency: str = pa.Field(str_matches=r"[A-Z][A-Z0-9]{1,3}", description="ISO 4217 or another short code")
    consumed_quantity: float = pa.Field(nullable=True)
    gpu_count: float = pa.Field(nullable=True, gt=0)
    gpu_hours: float = pa.Field(nullable=True, description="consumed hours x GPUs per instance; negative on corrections")

    class Config:
        coerce = True
        strict = False
