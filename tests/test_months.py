"""core.months: one check of a --month for every command, and the month's bounds."""
from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from core.months import check_month, month_bounds
from pipelines.config import Config
from pipelines.warehouse import connect
from reports.audit import build_audit_context
from reports.chargeback import build_context


@pytest.mark.parametrize("month", ["2026-13", "2026-00", "2026-1", "26-10", "2026-10-01", "", "October"])
def test_what_is_not_a_month_is_refused(month):
    with pytest.raises(InputError, match="expected YYYY-MM"):
        check_month(month)


@given(st.integers(1900, 2999), st.integers(1, 12))
def test_a_month_ends_where_the_next_begins(year, month):
    start, end = month_bounds(f"{year:04d}-{month:02d}")
    assert start == datetime(year, month, 1)
    assert end == (datetime(year + 1, 1, 1) if month == 12 else datetime(year, month + 1, 1))


def test_the_audit_and_the_chargeback_refuse_a_bad_month_before_reading_anything(tmp_path):
    con = connect(tmp_path / "wh.duckdb")   # an empty warehouse: the month is what is wrong
    for build in (lambda: build_audit_context(con, Config(), [], "2026-13"), lambda: build_context(con, Config(), "2026-13")):
        with pytest.raises(InputError) as err:
            build()
        assert str(err.value).startswith("--month 2026-13: not a month (expected YYYY-MM)")
