"""The one range check of the contracts (schemas.ranges.in_order): what passes and what fails."""
from __future__ import annotations

import math

import pandas as pd

from schemas.ranges import in_order

NAN = math.nan


def check(rows: list[tuple[float, float, float]], **kw) -> list[bool]:
    df = pd.DataFrame(rows, columns=["lo", "v", "hi"])
    return in_order(df, "lo", "v", "hi", **kw).tolist()


def test_bounds_around_the_value_pass_and_swapped_bounds_fail():
    assert check([(1, 2, 3), (2, 2, 2), (3, 2, 1), (2.5, 2, 3), (1, 2, 1.5)]) == [True, True, False, False, False]


def test_slack_absorbs_rounding_and_no_more():
    assert check([(2.01, 2, 3), (2.02, 2, 3)], absolute=0.01) == [True, False]
    assert check([(1e9 + 1, 1e9, 2e9), (1e9 + 1e3, 1e9, 2e9)], relative=1e-9) == [True, False]   # 1e-9 x 2e9 = 2


def test_an_unknown_value_passes_and_an_unknown_end_passes_only_when_open():
    assert check([(NAN, NAN, NAN), (NAN, 2, 3), (1, 2, NAN)]) == [True, False, False]
    assert check([(NAN, 2, 3), (1, 2, NAN), (NAN, 2, 1)], open_ends=True) == [True, True, False]
