"""A figure shown does not move with the order a double was summed in (core.figures): a value a
few ulps either side of a decimal prints as the decimal does, in every number filter."""
from __future__ import annotations

import math
from decimal import Decimal

from hypothesis import assume, example, given
from hypothesis import strategies as st

from reports.render import money, number, pct, sig, signed

FILTERS = {
    "number": lambda x, p: number(x, p), "money": lambda x, p: money(x, p), "pct": lambda x, p: pct(x, p),
    "sig": lambda x, p: sig(x, p + 1), "signed": lambda x, p: signed(x, p),
}


def nudged(x: float, ulps: int) -> float:
    for _ in range(abs(ulps)):
        x = math.nextafter(x, math.inf if ulps > 0 else -math.inf)
    return x


@given(st.decimals("-1e7", "1e7", places=4, allow_nan=False, allow_infinity=False), st.integers(-8, 8),
       st.integers(0, 3), st.sampled_from(sorted(FILTERS)))
@example(Decimal("4.85"), 1, 1, "number")     # 4.8500000000000005 printed 4.9, 4.8499999999999996 4.8
@example(Decimal("4.85"), -1, 1, "number")
@example(Decimal("0.125"), 1, 2, "money")
@example(Decimal("0.0125"), -1, 1, "pct")
@example(Decimal("-0.05"), 1, 1, "signed")
def test_a_few_ulps_do_not_change_what_is_shown(value: Decimal, ulps: int, places: int, name: str) -> None:
    # sig() shows a tiny magnitude as it is (1.0e-17): a value a few ulps from zero is no value
    # near a decimal, and settling takes noise relative to the value, not to zero
    assume(value != 0 or name != "sig")
    x = float(value)
    assert FILTERS[name](nudged(x, ulps), places) == FILTERS[name](x, places)


def test_figures_keep_their_digits() -> None:
    assert money(12_345_678_901.23) == "12,345,678,901.23"
    assert number(4.85, 2) == "4.85" and number(1234.5) == "1,234" and pct(0.5) == "50 %"
    assert signed(-0.04) == "+0.0" and signed(1234.56, 1) == "+1,234.6"
    assert money(Decimal("0.125")) == "0.12" and money(None) == "–" and money(-0.001) == "0.00"
