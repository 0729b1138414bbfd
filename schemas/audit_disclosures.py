"""Contract of `audit_disclosures` (grain: file_id x row_number): the published disclosures as
the footprint audit shows them."""
from __future__ import annotations

import pandera.pandas as pa


class AuditDisclosures(pa.DataFrameModel):
    file_id: int
    row_number: int = pa.Field(ge=1)
    model: str = pa.Field(str_length={"min_value": 1})
    source: str

    class Config:
        coerce = True
        strict = False
        unique = ["file_id", "row_number"]
