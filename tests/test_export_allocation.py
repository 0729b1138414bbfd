"""`meterbook export allocation`: the line-level allocation under team_month, for BI tools.

Lines add up to team_month for every meter: money exactly (DECIMAL), GPU-hours, energy and CO2e
to the quantum they are allocated in (1/1000 h, the watt-hour, the gram). The CSV prints money
in the currency's minor unit; the Parquet keeps the exact amounts."""
from __future__ import annotations

import csv
import re
from decimal import Decimal

import duckdb
import pytest
from click.testing import CliRunner

from core.vocabulary import METERS
from pipelines.cli import main
from pipelines.warehouse import connect

MONTH = "2026-10"


@pytest.fixture(scope="module")
def exported(demo_billing):
    res = CliRunner().invoke(main, ["export", "allocation", "--month", MONTH, "--warehouse", str(demo_billing / "wh.duckdb"),
                                    "--config", str(demo_billing / "demo" / "meterbook.toml"),
                                    "--out", str(demo_billing / "exports")])
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert f"wrote {demo_billing / 'exports' / f'allocation-{MONTH}.parquet'}" in res.output
    return demo_billing


def test_lines_sum_to_team_month_for_every_meter(exported):
    pq = exported / "exports" / f"allocation-{MONTH}.parquet"
    # money by its currency (the demo bills in USD and EUR), every other meter in its own unit
    lines = dict(((team, meter, currency), amount) for team, meter, currency, amount in duckdb.sql(
        f"select team, meter, case when meter like '%cost' then unit end, sum(amount) from '{pq}' group by all").fetchall())
    with duckdb.connect(str(exported / "wh.duckdb"), read_only=True) as con:
        rel = con.execute("select * from team_month where month = ?", [MONTH])
        cols = [d[0] for d in rel.description]
        team_month = [dict(zip(cols, r)) for r in rel.fetchall()]
    assert {r["currency"] for r in team_month if r["currency"]} == {"EUR", "USD"}
    checked = 0
    # money per team and billing currency; every other meter per team (its rows add up)
    totals: dict[tuple, Decimal | float] = {}
    for row in team_month:
        for meter, (unit, _) in METERS.items():
            key = (row["team"], meter, row["currency"] if unit == "currency" else None)
            totals[key] = totals.get(key, 0) + (row[meter] or 0)
    for (team, meter, currency), want in totals.items():
        unit, places = METERS[meter]
        got = lines.pop((team, meter, currency), Decimal(0))
        if unit == "currency":
            assert got == want, (team, meter)          # exact, to the last digit
        else:
            # team_month holds energy as DOUBLE; the lines are exact decimals
            assert round(float(got), places) == round(float(want), places), (team, meter)
        checked += got != 0
    assert not {k: v for k, v in lines.items() if v}    # no team or meter outside team_month
    assert checked > 40


def test_lines_name_their_source_day_and_workload(exported):
    pq = exported / "exports" / f"allocation-{MONTH}.parquet"
    types = dict(duckdb.sql(f"select column_name, column_type from (describe select * from '{pq}')").fetchall())
    assert list(types) == ["month", "day", "team", "resource_id", "namespace", "workload", "rule", "sharing_mode", "split_rule",
                           "meter", "amount",
                           "unit", "amount_reporting", "reporting_currency", "source_sha256", "source_row", "source_line"]
    assert types["amount"].startswith("DECIMAL") and types["day"] == "DATE"
    assert types["amount_reporting"].startswith("DECIMAL")
    with duckdb.connect(str(exported / "wh.duckdb"), read_only=True) as con:
        files = {s for (s,) in con.execute("select sha256 from source_files").fetchall()}
    rows = duckdb.sql(f"""select count(*) filter (where source_sha256 is null),
                                 count(*) filter (where meter like '%cost' and source_row is null),
                                 count(*) filter (where rule = 'telemetry_split' and namespace is not null),
                                 count(*) filter (where day is null),
                                 count(distinct day), list(distinct source_sha256)
                          from '{pq}'""").fetchall()[0]
    assert rows[:4] == (0, 0, rows[2], 0) and rows[2] > 0
    assert rows[4] == 31 and set(rows[5]) <= files


def test_csv_money_in_minor_units_plain_notation(exported):
    pq = exported / "exports" / f"allocation-{MONTH}.parquet"
    with open(exported / "exports" / f"allocation-{MONTH}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == duckdb.sql(f"select count(*) from '{pq}'").fetchall()[0][0]
    money = [r["amount"] for r in rows if r["unit"] in ("USD", "EUR")]
    other = [r["amount"] for r in rows if r["unit"] not in ("USD", "EUR")]
    assert money and all(re.fullmatch(r"-?\d+\.\d\d", a) for a in money)
    assert other and all(re.fullmatch(r"-?\d+\.\d{3}", a) for a in other)


def test_a_month_without_data_is_an_error_that_says_what_to_do(exported):
    res = CliRunner().invoke(main, ["export", "allocation", "--month", "2031-01", "--warehouse", str(exported / "wh.duckdb"),
                                    "--config", str(exported / "demo" / "meterbook.toml"), "--out", str(exported / "none")])
    assert res.exit_code == 1
    assert res.output.startswith("Error: --month 2031-01: no allocation for this month (") and "Ingest" in res.output


def test_estimated_energy_details_by_day_and_billing_file(exported):
    """Energy estimated from billed GPU-hours is detailed per day and billing file, not per
    billing row: each of a group's 18 energy and carbon meters would otherwise repeat every
    hourly GPU row of the resource (the drill-down's size grew with meters x rows)."""
    with connect(exported / "wh.duckdb", read_only=True) as con:
        per_line_day_file, rows_with_row, lines = con.execute("""
            select max(n), sum(with_row), count(distinct (team, meter, rule, source_group))
            from (select team, meter, rule, source_group, day, source_sha256, count(*) as n,
                         count(source_row) as with_row
                  from allocation_day
                  where source_group in (select source_group from int_energy_lines where basis = 'estimated')
                  group by all)""").fetchall()[0]
        gpu_rows_per_day = con.execute("""
            select max(n) from (select resource_id, charge_period_start::date, count(*) as n from int_charges_teams
                                where gpu_hours > 0 and resource_id in (select resource_id from int_energy_lines
                                                                        where basis = 'estimated') group by all)""").fetchall()[0][0]
    assert lines > 0 and gpu_rows_per_day > 1        # the demo bills estimated GPUs hourly
    assert per_line_day_file == 1 and rows_with_row == 0


def test_every_line_carries_its_meters_unit(exported):
    """A BI tool groups by unit: GPU-hours must say h, never the currency of the bill they came from."""
    pq = exported / "exports" / f"allocation-{MONTH}.parquet"
    units = duckdb.sql(f"select meter, list(distinct unit order by unit) from '{pq}' group by meter").fetchall()
    assert units
    for meter, got in units:
        unit = METERS[meter][0]
        assert got == (["EUR", "USD"] if unit == "currency" else [unit]), meter
