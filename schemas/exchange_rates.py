"""Contract of the `exchange_rates` table (grain: one rate a loaded file states for a day or a
month and a currency pair). A rate is the units of to_currency one unit of from_currency buys:
above 0, between two different ISO 4217 codes, with the publisher named."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import ISO_4217, MONTH


class ExchangeRates(pa.DataFrameModel):
    row_number: int = pa.Field(ge=1, description="1-based data row of the file (an ECB row holds many rates)")
    rate_date: pa.DateTime = pa.Field(nullable=True, description="the day the rate is for; null: the whole month")
    rate_month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    from_currency: str = pa.Field(str_matches=ISO_4217, description="the currency converted from")
    to_currency: str = pa.Field(str_matches=ISO_4217, description="the currency converted to")
    rate: float = pa.Field(gt=0, description="to_currency per one from_currency; exact DECIMAL in the table")
    source: str = pa.Field(description="who published the rate")

    class Config:
        coerce = True
        strict = False
