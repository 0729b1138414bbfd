"""Contract of the `instruments` table (grain: one declared contractual instrument or supplier
factor = one data row of an instruments file). Compiled to SQL by schemas.contract.reject_sql."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

# Energy attribute certificates and contracts first (GHG Protocol Scope 2 hierarchy), then
# supplier-specific factors; the residual mix covers the rest (int_market_claims.sql).
CONTRACTUAL = ["ppa", "vppa", "rec", "go", "i-rec", "eac"]
SUPPLIER = ["green_tariff", "supplier"]


class Instruments(pa.DataFrameModel):
    instrument_id: str
    instrument_type: str = pa.Field(isin=CONTRACTUAL + SUPPLIER)
    zone: str = pa.Field(description="meterbook zone, grid zone, operator code or ISO country")
    period_start: pd.Timestamp
    period_end: pd.Timestamp = pa.Field(description="exclusive")
    volume_mwh: float = pa.Field(nullable=True, gt=0, description="null only for a supplier factor without a volume")
    g_per_kwh: float = pa.Field(ge=0, description="the instrument's emission factor, gCO2e/kWh")
    source: str = pa.Field(str_matches=r".*\S.*", description="registry, certificate or contract reference")
    vintage_year: int = pa.Field(nullable=True, in_range={"min_value": 1990, "max_value": 2100})

    class Config:
        coerce = True
        strict = False
