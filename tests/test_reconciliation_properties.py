"""Invariants of the per-invoice reconciliation, over generated lines and invoices: every export
line is in exactly one row, an invoice loaded from several files counts once (the latest), and
the status says what the difference says."""
from __future__ import annotations

from decimal import Decimal

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from core.sql import read_sql
from pipelines.config import Config
from pipelines.stages import apply_config

MONTHS, CURRENCIES, ACCOUNTS, IDS = ["2026-09", "2026-10"], ["USD", "EUR"], ["A", "B"], ["I1", "I2", "I3", "I4"]

lines_st = st.lists(st.tuples(st.sampled_from(MONTHS), st.sampled_from(CURRENCIES), st.sampled_from(ACCOUNTS),
                              st.sampled_from([None, *IDS[:3]]), st.integers(0, 3), st.integers(-5_000, 50_000)),
                    min_size=1, max_size=30)
invoices_st = st.lists(st.tuples(st.integers(1, 3), st.sampled_from(IDS), st.sampled_from(ACCOUNTS), st.sampled_from(MONTHS),
                                 st.integers(-1_000, 200_000), st.sampled_from(CURRENCIES)),
                       max_size=8, unique_by=lambda t: (t[0], t[1]))   # an id is once per file (the reader rejects repeats)


CON = duckdb.connect()
apply_config(CON, Config())


def reconcile(lines, invoices) -> duckdb.DuckDBPyConnection:
    con = CON   # one database for every example (its cfg_ temp tables live on this connection)
    con.execute("create or replace table int_charges_teams (month varchar, billing_currency varchar, billing_account_id varchar, "
                "invoice_id varchar, source_group varchar, billed_cost decimal(38, 12))")
    # a source group is one month and currency (int_charges_teams puts both in it)
    con.executemany("insert into int_charges_teams values (?, ?, ?, ?, ?, ?)",
                    [(m, c, a, i, f"g{g}|{m}|{c}", Decimal(cents) / 1000) for m, c, a, i, g, cents in lines])
    con.execute("create or replace table allocation_lines as select source_group, 'billed_cost' as meter, sum(billed_cost) as amount "
                "from int_charges_teams group by all")
    con.execute("create or replace table invoices (file_id integer, row_number bigint, invoice_id varchar, issuer varchar, "
                "billing_account_id varchar, period varchar, amount decimal(38, 12), currency varchar)")
    if invoices:
        con.executemany("insert into invoices values (?, 1, ?, null, ?, ?, ?, ?)",
                        [(f, i, a, p, Decimal(cents) / 100, c) for f, i, a, p, cents, c in invoices])
    con.execute("create or replace table source_files as select range::integer as file_id, 'loaded' as status from range(1, 4)")
    con.execute("create or replace table int_cost_pool (cluster varchar, month varchar, pool_usd double)")   # no owned cluster
    con.execute(f"create or replace table reconciliation as {read_sql('30_marts', 'reconciliation.sql')}")
    return con


@settings(max_examples=50, deadline=None)
@given(lines_st, invoices_st)
def test_every_line_once_every_invoice_once(lines, invoices):
    con = reconcile(lines, invoices)
    got = con.execute("""select month, currency, sum(lines)::bigint, sum(export_billed_cost), sum(allocated_billed_cost)
                         from reconciliation group by all order by all""").fetchall()
    want = con.execute("""select month, billing_currency, count(*), sum(billed_cost), sum(billed_cost)
                          from int_charges_teams group by all order by all""").fetchall()
    assert [r for r in got if r[2]] == want
    latest = {}
    for _f, i, _a, p, cents, c in sorted(invoices):
        latest[i] = (p, c, Decimal(cents) / 100)
    rows = con.execute("select invoice_id, month, currency, invoice_amount from reconciliation where basis = 'invoice'").fetchall()
    assert sorted(rows) == sorted((i, p, c, amt) for i, (p, c, amt) in latest.items())
    for lines_n, difference, status in con.execute("select lines, difference, status from reconciliation").fetchall():
        expected = "no export lines" if lines_n == 0 else "reconciled" if abs(difference) < Decimal("0.005") else "differs"
        assert status == expected
