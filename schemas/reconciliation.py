"""Contract of `reconciliation` (grain: month x currency x billing source file). The chargeback
allocates every cent of the bill, exactly in DECIMAL: a difference of a cent means it does not
reconcile, and must show under Data quality."""
from __future__ import annotations

import pandera.pandas as pa

from pipelines.units import HALF_CENT
from schemas.allocation_lines import ISO_4217, MONTH


class Reconciliation(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    currency: str = pa.Field(str_matches=ISO_4217, description="billing currency")
    file_id: int
    sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$", description="of the source file")
    rows: int = pa.Field(ge=1, description="line items of the file in the month and currency")
    billed_cost: float = pa.Field(description="the file's part; exact DECIMAL in the table")
    invoice_billed_cost: float = pa.Field(description="every file of the month and currency")
    allocated_billed_cost: float = pa.Field(description="team_month's total; null = nothing allocated")
    # Exact to the cent by construction: half a cent either way is a failure.
    difference: float = pa.Field(gt=-HALF_CENT, lt=HALF_CENT, description="allocated - invoice")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "currency", "file_id"]
