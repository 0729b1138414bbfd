"""Contract of `scope_month` (grain: month x team x ownership): a team's electricity and embodied
CO2e split by who owns the hardware, each with the GHG Protocol scope it falls in and its bounds."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH
from schemas.carbon_month import SLACK

OWNERSHIP = ["cloud", "colocation", "on-premises"]
SCOPES = ["Scope 2", "Scope 3, category 1"]
# Owned hardware's embodied CO2e amortised by GPU-hour is in no scope: Scope 3, category 2 counts
# what was acquired, in the year of acquisition (int_resource_ownership says why)
BESIDE = "not in a scope (an amortised share, reported beside the inventory)"


class ScopeMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str
    ownership: str = pa.Field(isin=OWNERSHIP, description="who owns the hardware: [scopes], else the billing source")
    electricity_scope: str = pa.Field(isin=SCOPES, description="cloud: Scope 3 cat. 1; owned or controlled: Scope 2")
    embodied_scope: str = pa.Field(isin=[*SCOPES, BESIDE],
                                   description="cloud: Scope 3 cat. 1; owned or controlled: in no scope, beside the inventory")
    ownership_source: str = pa.Field(nullable=True, description="what decided the ownership")
    gpu_hours: float = pa.Field(nullable=True, ge=0, description="billed GPU-hours the embodied figure amortizes")
    facility_energy_kwh: float = pa.Field(nullable=True, ge=0)
    facility_energy_kwh_low: float = pa.Field(nullable=True, ge=0)
    facility_energy_kwh_high: float = pa.Field(nullable=True, ge=0)
    co2e_kg: float = pa.Field(nullable=True, ge=0, description="electricity, location-based")
    co2e_kg_low: float = pa.Field(nullable=True, ge=0)
    co2e_kg_high: float = pa.Field(nullable=True, ge=0)
    co2e_market_kg: float = pa.Field(nullable=True, ge=0, description="electricity, market-based; null: a zone without a factor")
    co2e_market_kg_low: float = pa.Field(nullable=True, ge=0)
    co2e_market_kg_high: float = pa.Field(nullable=True, ge=0)
    co2e_embodied_kg: float = pa.Field(nullable=True, ge=0, description="amortized embodied; null: no billed GPU-hours")
    co2e_embodied_kg_low: float = pa.Field(nullable=True, ge=0)
    co2e_embodied_kg_high: float = pa.Field(nullable=True, ge=0)

    @pa.dataframe_check(columns=["ownership", "electricity_scope", "embodied_scope"])
    def scope_follows_ownership(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        cloud = df["ownership"] == "cloud"
        return (cloud & (df["electricity_scope"] == SCOPES[1]) & (df["embodied_scope"] == SCOPES[1])) | (
            ~cloud & (df["electricity_scope"] == SCOPES[0]) & (df["embodied_scope"] == BESIDE))

    @pa.dataframe_check(columns=["facility_energy_kwh", "co2e_kg", "co2e_market_kg", "co2e_embodied_kg"])
    def ranges_ordered(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        ok = pd.Series(True, index=df.index)
        for m in columns:
            ok &= df[m].isna() | SLACK.holds(df, f"{m}_low", m, f"{m}_high")
        return ok

    class Config:
        coerce = True
        strict = True
        unique = ["month", "team", "ownership"]
