"""Figures as they are shown. DuckDB sums doubles in parallel, so a sum taken in another order
differs in its last bits: 4.85 GPU-hours comes out 4.8499999999999996 or 4.8500000000000005 and
prints 4.8 or 4.9, moving with whatever else the warehouse holds. Every figure printed is first
settled to SHOWN_DIGITS significant digits: far above such noise, far below any figure a report
shows (the cents of a hundred billion). The models sum order-free where they can (dsum); this
is the net under what still reaches a page as a double."""
from __future__ import annotations

import math

SHOWN_DIGITS = 13


def settled(x: float) -> float:
    """`x` without the last bits a summation order leaves in it (non-finite values as they are)."""
    return float(f"{x:.{SHOWN_DIGITS}g}") if math.isfinite(x) else x


def settled_sql(expr: str) -> str:
    """settled() as a DuckDB expression over a DOUBLE (C's %g, as Python's format uses)."""
    return f"printf('%.{SHOWN_DIGITS}g', {expr})::double"
