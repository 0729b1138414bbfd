"""A CUR line keeps its file row number, whichever way it is staged (issue 24): in place, written
once into charges and numbered by the order it was written in, or in full after a Restage; and
rows are numbered in file order only through plans that keep it (sources.tabular.file_order)."""
from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.ingest import ingest
from pipelines.warehouse import connect
from sources.tabular import file_order

ROWS = 2000
HEADER = ["identity/LineItemId", "bill/PayerAccountId", "bill/BillingPeriodStartDate", "lineItem/UsageAccountId",
          "lineItem/LineItemType", "lineItem/UsageStartDate", "lineItem/UsageEndDate", "lineItem/ProductCode",
          "lineItem/UsageType", "lineItem/ResourceId", "lineItem/UsageAmount", "lineItem/CurrencyCode",
          "lineItem/UnblendedCost", "product/instanceType", "pricing/unit", "resourceTags/user:team"]


def write_cur(path: Path, bad: set[int], repeat: tuple[int, int] | None) -> None:
    """ROWS line items; data row n bills resource r-n. Rows in `bad` carry a cost that does not
    parse; `repeat` = (j, k) gives row k row j's line item id and hour (a duplicate line item)."""
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(HEADER)
        for n in range(1, ROWS + 1):
            src = repeat[0] if repeat and n == repeat[1] else n
            hour = f"2026-10-{1 + src % 28:02d}T{src % 24:02d}:00:00Z"
            out.writerow([f"li-{src}", "444455556666", "2026-10-01T00:00:00.000Z", "111122223333",
                          ["Usage", "Tax", "Credit", "DiscountedUsage", "Fee", "Refund"][n % 6], hour, hour.replace(":00:00Z", ":30:00Z"),
                          "AmazonEC2", "USE1-BoxUsage:p4d.24xlarge", f"r-{n}", "1.0", "USD",
                          "n/a" if n in bad else f"{n % 97 / 10:.2f}", ["p4d.24xlarge", "m5.large", ""][n % 3], "Hrs",
                          ["research", "", "vision"][n % 3]])


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=st.sets(st.integers(1, ROWS), max_size=4),
       repeat=st.none() | st.tuples(st.integers(1, ROWS // 2), st.integers(ROWS // 2 + 1, ROWS)))
def test_every_line_keeps_its_file_row_number(tmp_path, bad, repeat):
    path = tmp_path / f"cur-{len(bad)}-{repeat}.csv"
    write_cur(path, bad, repeat)
    wh = tmp_path / f"wh-{len(bad)}-{repeat}.duckdb"
    wh.unlink(missing_ok=True)
    con = connect(wh)
    (r,) = ingest(con, [path])
    assert (r.rows_read, r.rows_loaded, r.rows_rejected) == (ROWS, ROWS - len(bad), len(bad))
    assert con.execute("select count(*) from charges where row_number <> substr(resource_id, 3)::int").fetchone() == (0,)
    assert {row for (row,) in con.execute("select distinct row_number from rejects").fetchall()} == bad
    # staged rows leave nothing behind: no placeholder file id, no tombstone
    assert con.execute("select count(*) from charges where file_id < 0 or charge_line < 0").fetchone() == (0,)
    dups = con.execute("select rows, first_row from findings where finding = 'duplicate_line_item'").fetchall()
    expected = [] if repeat is None or bad & set(repeat) else [(2, repeat[0])]
    assert dups == expected


def test_in_lists_keep_file_order_and_a_join_is_refused():
    con = duckdb.connect()
    con.execute("create table t as select range as i, 'x' || (range % 7) as k from range(10)")
    # an IN list of five or more values is planned as a join unless the in_clause optimizer is off
    file_order(con, "select i from t where k in ('x1', 'x2', 'x3', 'x4', 'x5', 'x6')")
    assert "in_clause" in con.execute("select current_setting('disabled_optimizers')").fetchone()[0]
    with pytest.raises(RuntimeError, match="JOIN"):
        file_order(con, "select t.i from t join t u using (i)")
