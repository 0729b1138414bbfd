"""Contract of the `invoices` table (grain: one invoice, as loaded from one invoices file). The
amount is what the invoice says is due for the period, in its currency; a credit note is negative."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import ISO_4217, MONTH


class Invoices(pa.DataFrameModel):
    row_number: int = pa.Field(ge=1, description="1-based data row in the invoices file")
    invoice_id: str = pa.Field(description="as printed on the invoice; the exports carry the same id")
    issuer: str = pa.Field(nullable=True, description="who issued it, e.g. Amazon Web Services, Inc.")
    billing_account_id: str = pa.Field(nullable=True, description="the billing (payer) account invoiced")
    period: str = pa.Field(str_matches=MONTH, description="the billing month invoiced, YYYY-MM")
    amount: float = pa.Field(description="total invoiced, in currency; exact DECIMAL in the table")
    currency: str = pa.Field(str_matches=ISO_4217, description="ISO 4217")

    class Config:
        coerce = True
        strict = False
