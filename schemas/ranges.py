"""The one check every ranged figure's contract makes: low <= value <= high, within a slack for
the rounding the figure went through (each contract states its own, with its reason)."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pandera.pandas as pa

# Sums of doubles (dsum): exact to 1e-12 per value; bounds compare within a relative hair.
REL = 1e-9


def in_order(df: pd.DataFrame, low: str, mid: str, high: str, *, absolute: float = 0.0, relative: float = 0.0,
             open_ends: bool = False) -> pd.Series:
    """Rows whose `low` <= `mid` <= `high`, each comparison allowed `absolute` plus `relative` x the
    larger magnitude of value and high. A row without a value passes (there is no figure to
    bound); with `open_ends`, so does each side whose end is unknown (a range known on one side)."""
    scale = pd.concat([df[mid].abs(), df[high].abs()], axis=1).max(axis=1).fillna(0)
    slack = absolute + relative * scale
    lo, hi = df[low] <= df[mid] + slack, df[mid] <= df[high] + slack
    if open_ends:
        lo, hi = lo | df[low].isna(), hi | df[high].isna()
    return df[mid].isna() | (lo & hi)



@dataclass(frozen=True)
class Slack:
    """A contract's allowance for the rounding its figures went through, and its range checks."""
    absolute: float = 0.0
    relative: float = 0.0
    open_ends: bool = False

    def holds(self, df: pd.DataFrame, low: str, mid: str, high: str) -> pd.Series:
        return in_order(df, low, mid, high, absolute=self.absolute, relative=self.relative, open_ends=self.open_ends)

    def check(self, name: str, mid: str, doc: str = ""):
        """A dataframe check named `name` that `<mid>_low` <= `mid` <= `<mid>_high`: one definition
        for every ranged figure, failures located under the three columns. `doc` says where the
        bounds come from."""
        def check(cls, df: pd.DataFrame, *, columns: list[str]) -> pd.Series:
            return self.holds(df, *columns)
        check.__name__ = check.__qualname__ = name
        check.__doc__ = doc or None
        return pa.dataframe_check(columns=[f"{mid}_low", mid, f"{mid}_high"])(check)
