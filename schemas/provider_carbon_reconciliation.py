"""Contract of `provider_carbon_reconciliation` (grain: provider x month x account x service x
region): the cloud's own carbon figure beside meterbook's for the same scope and basis, with
the class of explanation for any gap."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH

GAP_CLASSES = ["within range", "boundary: non-GPU service", "boundary: shared infrastructure",
               "provider PUE and market instruments", "boundary: no meterbook data", "not in the provider export"]


class ProviderCarbonReconciliation(pa.DataFrameModel):
    provider: str = pa.Field(isin=["aws", "gcp"])
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    account_id: str = pa.Field(description="AWS usage account; Google project (or billing account)")
    service: str
    region: str = pa.Field(nullable=True, description="null: a global service")
    model_version: str = pa.Field(nullable=True, description="the provider's carbon model version; null: not in the export")
    provider_co2e_location_kg: float = pa.Field(nullable=True, ge=0)
    provider_co2e_market_kg: float = pa.Field(nullable=True, ge=0)
    co2e_kg: float = pa.Field(ge=0, description="meterbook, location-based")
    co2e_kg_low: float = pa.Field(ge=0)
    co2e_kg_high: float = pa.Field(ge=0)
    co2e_market_kg: float = pa.Field(ge=0)
    gap_class: str = pa.Field(isin=GAP_CLASSES)
    finding: str = pa.Field(nullable=True)

    class Config:
        coerce = True
        strict = False
        unique = ["provider", "month", "account_id", "service", "region"]

    @pa.dataframe_check(columns=["provider_co2e_location_kg", "co2e_kg", "difference_location_kg"])
    def difference_is_provider_less_meterbook(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        d = df["provider_co2e_location_kg"] - df["co2e_kg"]
        return df["provider_co2e_location_kg"].isna() | ((d - df["difference_location_kg"]).abs() <= 1e-9 * (1 + d.abs()))
