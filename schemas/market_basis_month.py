"""Contract of `market_basis_month` (grain: month x zone x electricity scope x claim): what each
zone's market-based CO2e rests on, with each factor's source and year; a zone's Scope 2 and cloud
energy apart, as instruments cover Scope 2 energy only."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH

CLAIM_KINDS = ["instrument", "supplier", "residual_mix", "not_available", "unmatched", "duplicate"]


class MarketBasisMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    zone: str = pa.Field(nullable=True, description="null for unmatched and duplicate declarations")
    electricity_scope: str = pa.Field(nullable=True, isin=["Scope 2", "Scope 3, category 1"],
                                      description="of the energy claimed; null with zone")
    claim_kind: str = pa.Field(isin=CLAIM_KINDS)
    claim: str = pa.Field(description="instrument id, or the claim kind")
    source: str = pa.Field(nullable=True, description="where the factor is published; null only for not_available")
    g_per_kwh: float = pa.Field(nullable=True, ge=0)
    applied_kwh: float = pa.Field(ge=0, description="facility energy this claim covers")
    excess_kwh: float = pa.Field(nullable=True, ge=0, description="volume the month could claim beyond consumption")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "zone", "electricity_scope", "claim"]

    @pa.dataframe_check(columns=["claim_kind", "electricity_scope"])
    def only_scope_2_energy_takes_instruments(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        """The organisation's instruments and supplier factors are claimed for the electricity it
        buys (Scope 2 Guidance, ch. 7), never for a cloud provider's."""
        return ~df["claim_kind"].isin(["instrument", "supplier"]) | (df["electricity_scope"] == "Scope 2")

    @pa.dataframe_check(columns=["claim_kind", "source"])
    def every_factor_has_a_source(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        return (df["claim_kind"] == "not_available") | df["source"].notna()
