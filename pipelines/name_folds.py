"""int_name_folds: the team each tag value outside ASCII stands for, folded in Python because
Unicode NFKC is in neither engine's SQL (core.text.team_name is the one definition)."""
from __future__ import annotations

import duckdb
import pandas as pd

from core.text import team_name


def name_folds_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per value of int_tag_values: `raw` as billed, `team` as every output names it
    (null when nothing visible is left). A few distinct values a month, however many lines."""
    raws = [r[0] for r in con.execute("select raw from int_tag_values order by raw").fetchall()]
    return pd.DataFrame({"raw": pd.Series(raws, dtype="string"),
                         "team": pd.Series([team_name(r) for r in raws], dtype="string")})
