"""core.months: one check of a --month for every command, and the month's bounds."""
from __future__ import annotations

from datetime import datetime

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from core.months import check_month, month_bounds
from pipelines.cli import main
from pipelines.warehouse import connect


@pytest.mark.parametrize("month", ["2026-13", "2026-00", "2026-1", "26-10", "2026-10-01", "", "October"])
def test_what_is_not_a_month_is_refused(month):
    with pytest.raises(InputError, match="expected YYYY-MM"):
        check_month(month)


@given(st.integers(1900, 2999), st.integers(1, 12))
def test_a_month_ends_where_the_next_begins(year, month):
    start, end = month_bounds(f"{year:04d}-{month:02d}")
    assert start == datetime(year, month, 1)
    assert end == (datetime(year + 1, 1, 1) if month == 12 else datetime(year, month + 1, 1))


def test_the_audit_refuses_a_bad_month_with_one_error_line(tmp_path):
    connect(tmp_path / "wh.duckdb").close()   # an empty warehouse: the month is what is wrong
    res = CliRunner().invoke(main, ["report", "audit", "--month", "2026-13", "--warehouse", str(tmp_path / "wh.duckdb"),
                                    "--out", str(tmp_path / "out")])
    assert res.exit_code == 1 and res.output.startswith("Error: --month 2026-13: not a month"), res.output
