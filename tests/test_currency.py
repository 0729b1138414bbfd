"""A month billed in two currencies: rates as input (three layouts), one reporting currency, team
totals that sum to the converted bill, each invoice reconciled in its own currency, and a month's
conversion that a later month's rates never move."""
from __future__ import annotations

import csv
from datetime import date, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.sql import read_sql
from pipelines.cli import main
from pipelines.config import Config, CurrencyConfig, load_config
from pipelines.stage_inputs import apply_config
from pipelines.warehouse import add_macros, connect
from tests.conftest import DATA, ingest_json

FX = DATA / "fx"
OCTOBER = [date(2026, 10, 1) + timedelta(days=i) for i in range(31)]


def test_each_published_layout_loads_its_rates_and_counts_days_without_one(warehouse: Path) -> None:
    out = ingest_json(warehouse, FX)
    kinds = {Path(f["path"]).name: f for f in out["files"]}
    assert kinds["eurofxref-hist.csv"]["kind"] == "ecb_eurofxref"
    assert kinds["frb_h10.csv"]["kind"] == "frb_h10"
    assert kinds["rates_with_bad_rate.csv"]["kind"] == "exchange_rates"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rate = lambda f, t, d: con.execute(  # noqa: E731
            "select rate::varchar, source from exchange_rates where from_currency = ? and to_currency = ? and rate_date = ?",
            [f, t, d]).fetchall()
        # ECB: one euro buys 1.1604 USD on 30 October; N/A (CYP) is no rate, not a zero
        assert ("1.160400000000", "ECB euro foreign exchange reference rates") in rate("EUR", "USD", "2026-10-30")
        assert not con.execute("select 1 from exchange_rates where to_currency = 'CYP'").fetchall()
        # H.10: RXI$US_N.B.EU is USD per EUR, RXI_N.B.JA JPY per USD
        assert rate("EUR", "USD", "2026-10-01")[0][0] in {"1.169800000000", "1.170200000000"}
        assert rate("USD", "JPY", "2026-10-01") == [("147.920000000000", "Federal Reserve Board H.10, series RXI_N.B.JA")]
        month_rate = con.execute("select rate::varchar from exchange_rates where rate_date is null").fetchall()
        assert month_rate == [("1.331000000000",)]
        rejects = set(con.execute("select check_name from rejects").fetchall())
    # a bad rate is a reject; a day the publisher gave no rate (H.10 ND) is not, it is counted
    assert rejects == {("parses_as_decimal",)}
    assert "2026-10-12" in kinds["frb_h10.csv"]["totals"]["no_rate_days"]


# ---- the demo month: a second billing account billed in EUR, rates beside the bills ----------

@pytest.fixture(scope="module")
def two_currencies(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("fx")
    demo, wh = root / "demo", root / "wh.duckdb"
    run = CliRunner()
    assert run.invoke(main, ["demo", "--out", str(demo)]).exit_code == 0
    res = run.invoke(main, ["ingest", str(demo / "billing"), str(demo / "invoices"), "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    config = demo / "meterbook.toml"
    res = run.invoke(main, ["build", "--warehouse", str(wh), "--config", str(config)])
    assert res.exit_code == 0, res.output
    rates_file = next((demo / "billing").glob("rates-*.csv"))
    rates = {date.fromisoformat(r["date"]): Decimal(r["rate"]) for r in csv.DictReader(rates_file.open(encoding="utf-8"))}
    return {"wh": wh, "config": config, "rates": rates}


def rate_of(rates: dict[date, Decimal], day: date) -> Decimal:
    """The day rule, independently: the latest published rate on or before the day."""
    return rates[max(d for d in rates if d <= day)]


def test_team_totals_sum_to_the_converted_bill_and_each_invoice_reconciles_in_its_currency(two_currencies) -> None:
    from reports.chargeback import build_context
    with connect(two_currencies["wh"]) as con:
        ctx = build_context(con, load_config(two_currencies["config"]), "2026-10")
        days = con.execute("""select day, sum(amount) from allocation_day where unit = 'EUR' and meter = 'billed_cost'
                              group by day""").fetchall()
        usd_bill = con.execute("select sum(billed_cost) from team_month where currency = 'USD'").fetchone()[0]
        recon = con.execute("select currency, invoice_id, status from reconciliation where month = '2026-10' and basis = 'invoice'").fetchall()
    # the converted EUR bill: every charge day's EUR at that day's rate, rounded once, half-even
    exact = sum((Decimal(str(a)) * rate_of(two_currencies["rates"], d) for d, a in days), Decimal(0))
    eur = ctx["fx"][0]
    assert eur["from_currency"] == "EUR" and eur["bill_reporting"] == exact.quantize(Decimal("0.01"), ROUND_HALF_EVEN)
    assert ctx["currency"] == "USD"
    # the teams sum exactly to the bill: the USD accounts as billed plus the EUR one as converted
    assert sum(Decimal(str(t["billed_cost"])) for t in ctx["teams"]) == usd_bill + eur["bill_reporting"]
    # each invoice reconciled in its own currency first
    assert sorted((c, s) for c, _, s in recon) == [("EUR", "reconciled"), ("USD", "reconciled"), ("USD", "reconciled")]
    # the rates used are listed with their source and day; the rounding-and-rate line is its own figure
    assert {r["source"][:5] for r in ctx["fx"]} == {"demo:"}
    assert {r["rate_date"] for r in ctx["fx"]} <= set(two_currencies["rates"])
    assert eur["rounding_and_rate"] == eur["bill_reporting"] - eur["bill_at_mean"]


def test_resources_days_and_allocation_lines_carry_the_reporting_currency_beside_the_billed_one(two_currencies) -> None:
    from reports.chargeback import build_context, report_html, team_lines
    with connect(two_currencies["wh"]) as con:
        q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        teams = {t: (b, e, lc) for t, b, e, lc in q("""select team, billed_cost, effective_cost, list_cost
                                                      from team_month_reporting where month = '2026-10'""")}
        eur = q("""select team, resource_id, billed_cost, billed_cost_reporting, reporting_currency from team_resource_month
                   where month = '2026-10' and currency = 'EUR'""")
        by_resource = q("""select team, sum(billed_cost_reporting), sum(effective_cost_reporting) from team_resource_month
                           where month = '2026-10' group by team""")
        by_line = q("""select team, meter, sum(amount_reporting) from allocation_day_reporting
                       where month = '2026-10' and meter in ('billed_cost', 'effective_cost', 'list_cost') group by all""")
        by_day = q("select team, sum(billed_cost_reporting) from team_day where month = '2026-10' group by team")
        fx = q("select bill_billing, bill_reporting from fx_month where month = '2026-10' and from_currency = 'EUR' limit 1")[0]
        ctx = build_context(con, load_config(two_currencies["config"]), "2026-10")
        lines_by_team = team_lines(con, "2026-10", "USD")
    # the EUR account's charges: converted, the EUR amount kept beside it
    assert eur == [("vision", None, fx[0], fx[1], "USD")]
    # a team's resources, allocation lines and days add up to its converted chargeback figure
    assert {t: (b, e) for t, b, e in by_resource} == {t: v[:2] for t, v in teams.items()}
    meters = ("billed_cost", "effective_cost", "list_cost")
    assert {(t, m): a for t, m, a in by_line} == {(t, m): v[i] for t, v in teams.items() for i, m in enumerate(meters)}
    assert all(abs(d - float(teams[t][0])) < 1e-6 for t, d in by_day)
    # the team's statement prints the converted figure, the billed EUR beside it
    html = report_html(ctx, "teams", per_team=True)
    assert f"EUR {fx[0]:,.2f} billed" in html and f"{fx[1]:,.2f}" in html
    # the statement's lines are in the report's currency too: they add up to the team's figure
    for team, lines in lines_by_team.items():
        for meter, i in (("billed_cost", 0), ("effective_cost", 1)):
            assert abs(sum(float(ln[meter] or 0) for ln in lines) - float(teams[team][i])) < 0.005, (team, meter)
    assert [ln["category"] for ln in lines_by_team["vision"] if ln["billed_in"] == "EUR"] == ["direct"]
    assert "Direct use, billed in EUR" in html


def test_a_line_in_another_currency_splits_its_converted_amount_over_its_days_exactly(two_currencies) -> None:
    with connect(two_currencies["wh"]) as con:
        q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        eur = q("""select d.meter, d.source_group, count(*), sum(d.amount_reporting), any_value(x.amount_reporting),
                          count(*) filter (where d.amount_reporting > floor(d.amount * f.rate * 100) / 100)
                   from allocation_day_reporting d
                   join int_fx_lines x using (month, team, meter, rule, source_group)
                   join int_fx_applied f on f.month = d.month and f.from_currency = d.unit and f.day = d.day
                   where d.month = '2026-10' and d.unit = 'EUR' group by all""")
        usd = q("""select count(*), count(*) filter (where amount_reporting = amount and reporting_currency = 'USD')
                   from allocation_day_reporting
                   where month = '2026-10' and unit = 'USD' and meter in ('billed_cost', 'effective_cost', 'list_cost')""")[0]
        other = q("""select count(*), count(amount_reporting) from allocation_day_reporting
                     where month = '2026-10' and meter not in ('billed_cost', 'effective_cost', 'list_cost')""")[0]
    # the EUR account's lines (billed, effective, list cost), each over the month's days: the
    # cents left after flooring each day go to the days ranked first, so the line adds up exactly
    assert {m for m, *_ in eur} == {"billed_cost", "effective_cost", "list_cost"}
    for meter, group, days, converted, line, rounded_up in eur:
        assert days > 1 and rounded_up > 0, (meter, group)
        assert converted == line, (meter, group)
    # money already in the reporting currency keeps its amount, row by row; other meters have none
    assert usd[0] > 0 and usd[0] == usd[1]
    assert other[0] > 0 and other[1] == 0


def test_several_currencies_without_a_reporting_currency_is_one_error(two_currencies) -> None:
    from pipelines.stages import run_stages
    from reports.chargeback import build_context
    with connect(two_currencies["wh"]) as con:
        try:
            run_stages(con, Config())
            with pytest.raises(InputError, match=r"several currencies") as err:
                build_context(con, Config(), "2026-10")
            assert "EUR, USD" in str(err.value) and "[currency] reporting" in str(err.value)
            rule = Config(currency=CurrencyConfig(reporting="USD", rate_rule="budget", budget_rates={}))
            run_stages(con, rule)
            with pytest.raises(InputError, match=r"no EUR -> USD exchange rate \(charges of 2026-10-\d\d"):
                build_context(con, rule, "2026-10")
        finally:
            run_stages(con, load_config(two_currencies["config"]))


# ---- the conversion models alone, for the freeze property ----------------------------------

def convert(rates: list[tuple[str, str]], rule: str) -> list[tuple]:
    """team_currency_month over a two-month allocation_day in EUR and the given rates (date, rate)."""
    con = duckdb.connect()
    add_macros(con)
    apply_config(con, Config(currency=CurrencyConfig(reporting="USD", rate_rule=rule)))
    con.execute("create table source_files as select 1 as file_id, 'loaded' as status")
    con.execute("""create table exchange_rates as select 1 as file_id, 1::bigint as row_number, d::date as rate_date,
                   strftime(d::date, '%Y-%m') as rate_month, 'EUR' as from_currency, 'USD' as to_currency,
                   r::decimal(38, 12) as rate, 'test' as source from (values """ + ", ".join(f"('{d}', '{r}')" for d, r in rates)
                + ") t(d, r)")
    con.execute("""create table allocation_day as select strftime(d, '%Y-%m') as month, d::date as day, team,
                   'direct' as rule, 'billed_cost' as meter, amt::decimal(38, 12) as amount, 'EUR' as unit
                   from (values ('2026-10-03'::date, 'a', 10.005), ('2026-10-03'::date, 'b', 20.125),
                                ('2026-11-04'::date, 'a', 7.5), ('2026-11-04'::date, 'b', -1.25)) t(d, team, amt)""")
    fx_models(con)
    return con.execute("select month, team, billed_cost_reporting from team_currency_month order by all").fetchall()


def fx_models(con: duckdb.DuckDBPyConnection) -> None:
    for folder, name in (("20_intermediate", "int_fx_rates"), ("20_intermediate", "int_fx_applied"),
                         ("30_marts", "team_currency_month"), ("30_marts", "fx_month")):
        con.execute(f"create table {name} as {read_sql(folder, name + '.sql')}")


rate_text = st.decimals(min_value=Decimal("0.5"), max_value=Decimal("2"), places=4).map(str)


@settings(max_examples=25, deadline=None)
@given(october=st.lists(rate_text, min_size=31, max_size=31), november=rate_text, restated=rate_text,
       rule=st.sampled_from(["day", "month_average"]))
def test_restating_a_later_months_rates_never_moves_an_earlier_month(october, november, restated, rule) -> None:
    oct_rates = [(str(d), r) for d, r in zip(OCTOBER, october)]
    before = convert(oct_rates + [("2026-11-02", november), ("2026-11-03", november)], rule)
    after = convert(oct_rates + [("2026-11-02", restated), ("2026-11-03", restated)], rule)
    assert [r for r in before if r[0] == "2026-10"] == [r for r in after if r[0] == "2026-10"]
    # and the teams of each month add up to the bill converted once, to the cent
    for month in ("2026-10", "2026-11"):
        assert sum(r[2] for r in before if r[0] == month) * 100 % 1 == 0


# ---- cross rates: the ECB states EUR -> X only --------------------------------------------

def test_a_gbp_bill_reported_in_usd_converts_at_the_cross_rate_via_eur(tmp_path: Path) -> None:
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, DATA / "fx_cross" / "eurofxref_usd_gbp.csv")
    with duckdb.connect(str(wh)) as con:
        add_macros(con)
        apply_config(con, Config(currency=CurrencyConfig(reporting="USD", rate_rule="day")))
        con.execute("""create table allocation_day as select '2026-10' as month, d::date as day, 'a' as team,
                       'direct' as rule, 'billed_cost' as meter, amt::decimal(38, 12) as amount, 'GBP' as unit
                       from (values ('2026-10-01', 100.00), ('2026-10-02', 50.00)) t(d, amt)""")
        fx_models(con)
        used = con.execute("select rate_date, rate, source, bill_reporting from fx_month order by rate_date").fetchall()
    # the same day's EUR -> USD over EUR -> GBP, never a rate of another day
    cross = {date(2026, 10, 1): Decimal("1.1702") / Decimal("0.87010"), date(2026, 10, 2): Decimal("1.1689") / Decimal("0.86946")}
    assert [(d, r) for d, r, _, _ in used] == [(d, c.quantize(Decimal("1e-12"), ROUND_HALF_EVEN)) for d, c in sorted(cross.items())]
    for _, _, source, _ in used:
        assert source.startswith("cross rate via EUR") and source.count("ECB euro foreign exchange reference rates") == 2
        assert "EUR -> USD" in source and "EUR -> GBP" in source
    exact = sum(Decimal(a) * Decimal(r) for a, (_, r, _, _) in zip(("100.00", "50.00"), used))
    assert used[0][3] == exact.quantize(Decimal("0.01"), ROUND_HALF_EVEN)


# ---- Fed H.10: a holiday is a day without a rate, not a bad row -------------------------------

def test_an_h10_holiday_is_a_day_without_a_rate_that_the_day_rule_skips(tmp_path: Path) -> None:
    wh = tmp_path / "wh.duckdb"
    f = ingest_json(wh, DATA / "fx_h10_holiday" / "frb_h10_columbus_day.csv")["files"][0]
    # four days read: three rates and Columbus Day (ND), none of them a reject
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (4, 4, 0)
    assert f["totals"]["no_rate_days"] == ["2026-10-12"] and f["totals"]["rates"] == 3
    with duckdb.connect(str(wh)) as con:
        assert con.execute("select count(*) from rejects").fetchone()[0] == 0
        add_macros(con)
        apply_config(con, Config(currency=CurrencyConfig(reporting="USD", rate_rule="day")))
        con.execute("""create table allocation_day as select '2026-10' as month, '2026-10-12'::date as day, 'a' as team,
                       'direct' as rule, 'billed_cost' as meter, 100.00::decimal(38, 12) as amount, 'EUR' as unit""")
        fx_models(con)
        used = con.execute("select rate_date, rate, bill_reporting from fx_month").fetchall()
    # the holiday's charge takes the Friday before, the latest day the Fed published
    assert used == [(date(2026, 10, 9), Decimal("1.166100000000"), Decimal("116.610000000000"))]
