"""Contract of the `contract_commitments` table (grain: one commitment of a contract, as loaded
from one FOCUS Contract Commitment file)."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import ISO_4217


class ContractCommitments(pa.DataFrameModel):
    row_number: int = pa.Field(ge=1, description="1-based data row in the file")
    contract_commitment_id: str = pa.Field(description="ContractCommitmentId; charges name it in ContractApplied")
    contract_commitment_category: str = pa.Field(isin=["Spend", "Usage"], description="Spend or Usage")
    contract_commitment_cost: float = pa.Field(nullable=True, ge=0, description="cost of the commitment over its period")
    contract_commitment_quantity: float = pa.Field(nullable=True, ge=0, description="committed quantity (Usage)")
    billing_currency: str = pa.Field(nullable=True, str_matches=ISO_4217, description="ISO 4217")

    class Config:
        coerce = True
        strict = False
