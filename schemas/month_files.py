"""Contract of `month_files` (grain: month x file_id): the loaded files a month's figures rest on."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class MonthFiles(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    file_id: int
    role: str = pa.Field(isin=["billing", "telemetry", "runs", "grid", "instruments", "invoices", "work", "rates",
                                               "requests", "jobs", "job_stats", "commitments", "provider_carbon"])
    sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "file_id"]
