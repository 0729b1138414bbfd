"""Contract of `reconciliation` (grain: month x currency x invoice x basis). The chargeback
allocates every cent of the lines it reads, exactly in DECIMAL: allocated and export lines differ
by less than half a cent on every row, or it does not reconcile and shows under Data quality. An
invoice that differs from its export lines is not a broken contract but a finding
(invoice_difference): the difference column is free where the basis is an invoice."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from core.units import HALF_CENT
from schemas.allocation_lines import ISO_4217, MONTH

BASES = ["invoice", "cost pool", "loaded exports"]
REFERENCED = ["invoice", "cost pool"]   # bases measured against an amount of their own
STATUSES = ["reconciled", "differs", "no export lines"]


class Reconciliation(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM; an invoice's period")
    currency: str = pa.Field(str_matches=ISO_4217, description="billing currency")
    invoice_id: str = pa.Field(nullable=True, description="loaded invoice, or the id the export lines carry (null: none)")
    basis: str = pa.Field(isin=BASES, description="what the lines are reconciled to")
    invoice_amount: float = pa.Field(nullable=True, description="as invoiced; null for basis 'loaded exports'")
    lines: int = pa.Field(ge=0, description="export lines billed on it in the month")
    export_billed_cost: float = pa.Field(description="their billed cost; exact DECIMAL in the table")
    allocated_billed_cost: float = pa.Field(description="what allocation_lines carries of those lines")
    difference: float = pa.Field(description="allocated - invoice amount (or - export lines without an invoice)")
    status: str = pa.Field(isin=STATUSES)

    class Config:
        coerce = True
        strict = False
        unique = ["month", "currency", "invoice_id", "basis"]

    @pa.dataframe_check(columns=["allocated_billed_cost", "export_billed_cost"])
    def allocation_keeps_every_cent(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        """Exact to the cent by construction: half a cent either way is a failure."""
        return (df["allocated_billed_cost"] - df["export_billed_cost"]).abs() < HALF_CENT

    @pa.dataframe_check(columns=["basis", "invoice_amount", "difference"])
    def difference_is_against_the_basis(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        """An invoice (or cost pool) row has its amount and is measured against it; an exports row against itself."""
        referenced = df["basis"].isin(REFERENCED)
        reference = df["invoice_amount"].where(referenced, df["export_billed_cost"])
        has_amount = df["invoice_amount"].notna() == referenced
        return has_amount & ((df["allocated_billed_cost"] - reference - df["difference"]).abs() < HALF_CENT)
