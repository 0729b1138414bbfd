"""Contract of `audit_reconstructions` (grain: one engine input, by input_key): the reconstruct
engine's result for every input the footprint audit can ask for, or why the engine cannot read it."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

KEY_HEX = 32   # hex digits of an input key: 128 bits, no collision among a warehouse's inputs


class AuditReconstructions(pa.DataFrameModel):
    input_key: str = pa.Field(str_length={"min_value": KEY_HEX, "max_value": KEY_HEX},
                              description="sha256 of the engine input's JSON (keys sorted), first 32 hex digits")
    model: str = pa.Field(description="the input's model (a disclosure's, or a CodeCarbon run's name)")
    result_json: str = pa.Field(nullable=True, description="the engine's reconstruct --json object")
    error: str = pa.Field(nullable=True, description="why the engine cannot read the input: what, where, fix (JSON)")

    @pa.dataframe_check(columns=["result_json", "error"])
    def result_or_error(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
        return df["result_json"].isna() != df["error"].isna()

    class Config:
        coerce = True
        strict = True
        unique = ["input_key"]
