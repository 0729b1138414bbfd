"""Contract of `findings_ranked` (grain: month x finding x subject): the findings the reports show,
each with the team that pays for its resource, its section, materiality and reading order."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from schemas.allocation_lines import MONTH
from schemas.findings_month import FINDINGS

SECTIONS = ["decision", "data_quality"]


class FindingsRanked(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    finding: str = pa.Field(isin=FINDINGS)
    subject: str = pa.Field(nullable=True)
    paying_team: str = pa.Field(nullable=True, description="team charged the most for the finding's resource")
    section: str = pa.Field(isin=SECTIONS)
    material: bool = pa.Field(description="money at stake at or above the materiality cut")
    rank: int = pa.Field(ge=1, description="reading order within the month, 1 first")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "finding", "subject"]

    @pa.dataframe_check()
    def ranks_are_a_sequence(cls, df: pd.DataFrame) -> pd.Series:
        """Ranks run 1..n within each month, without gaps or ties."""
        ok = df.groupby("month")["rank"].transform(lambda r: sorted(r) == list(range(1, len(r) + 1)))
        return ok.astype(bool)
