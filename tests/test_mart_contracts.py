"""The marts' pandera contracts: the demo month passes them all, and each check catches the
fault it states, located by table, column(s) and check as contract_findings records it."""
from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from core.sql import read_sql
from pipelines.config import Config, load_config
from pipelines.stages import (
    IN_SQL,
    VALIDATED,
    apply_config,
    contract_failures,
    pandas_contract_failures,
    run_stages,
    sql_contract_failures,
)
from pipelines.warehouse import connect
from schemas.findings_month import FINDINGS
from tests.allocation_fixtures import Charge, GpuHour, build
from tests.pdf_helpers import cli
from tests.test_end_to_end import demo_report  # noqa: F401  (module fixture: the demo month, ingested)

MARTS = ["allocation_lines", "team_month", "team_energy_lines", "reconciliation", "findings_month"]


@pytest.fixture(scope="module")
def demo_wh(demo_report, tmp_path_factory) -> Path:  # noqa: F811
    """The demo month with its CodeCarbon runs and model disclosures too (so findings_month has
    its scaling and energy findings), every stage rerun."""
    wh = tmp_path_factory.mktemp("marts") / "wh.duckdb"
    shutil.copy(demo_report["warehouse"], wh)
    demo = demo_report["demo"]
    cli("ingest", str(demo / "codecarbon"), str(demo / "disclosures"), "--warehouse", str(wh))
    with connect(wh) as con:
        run_stages(con, load_config(demo / "meterbook.toml"))
    return wh


def copy_of(wh: Path, *tables: str) -> duckdb.DuckDBPyConnection:
    """The demo's tables, copied with their types into a scratch database to break."""
    con = duckdb.connect()
    con.execute(f"attach '{wh}' as wh (read_only)")
    for t in tables:
        con.execute(f"create table {t} as select * from wh.{t}")
    con.execute("detach wh")
    return con


def located(con: duckdb.DuckDBPyConnection, table: str) -> set[tuple[str, str, str]]:
    return {f[:3] for f in contract_failures(con, table, VALIDATED[table])}


def test_demo_month_meets_every_contract(demo_wh):
    with duckdb.connect(str(demo_wh), read_only=True) as con:
        findings = con.execute("select * from contract_findings").fetchall()
        sizes = {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in MARTS}
    assert findings == [], "\n".join(map(str, findings))
    assert set(VALIDATED) >= set(MARTS)
    assert all(sizes.values()), sizes          # passing on an empty mart would prove nothing


def first_row(table: str, where: str) -> str:
    return f"rowid = (select min(rowid) from {table} where {where})"


BILLED_LINE = first_row("allocation_lines", "meter = 'billed_cost' and amount > 0")
GRAIN = "month, team, meter, rule, source_group"
ADDS_UP = ("month, source_group, meter, amount, source_amount", "lines_add_up_to_the_source")


@pytest.mark.parametrize("breakage, expected", [
    pytest.param(f"insert into allocation_lines select * from allocation_lines where {BILLED_LINE}",
                 {(GRAIN, "multiple_fields_uniqueness"), ADDS_UP}, id="line-twice"),
    pytest.param(f"update allocation_lines set amount = amount + 0.01 where {BILLED_LINE}", {ADDS_UP}, id="cent-off"),
    pytest.param(f"update allocation_lines set amount = -amount where {BILLED_LINE}",
                 {("amount, source_amount", "sign_of_the_source"), ADDS_UP}, id="sign-flipped"),
    pytest.param("update allocation_lines set currency = 'USD' where meter = 'it_energy_kwh'",
                 {("meter, currency", "currency_only_on_charge_meters")}, id="currency-on-energy"),
    pytest.param(f"update allocation_lines set share = 1.5 where {BILLED_LINE}", {("share", "in_range(0, 1)")}, id="share"),
])
def test_allocation_lines_contract(demo_wh, breakage, expected):
    con = copy_of(demo_wh, "allocation_lines")
    con.execute(breakage)
    assert located(con, "allocation_lines") == {("allocation_lines", *e) for e in expected}


GPU_HOUR = first_row("int_gpu_hours", "energy_kwh > 0 and board_max_kwh is not null and energy_kwh_high is not null")
DAY_ROW = first_row("allocation_day", "meter = 'billed_cost' and source_row is not null")


@pytest.mark.parametrize("table, breakage, expected", [
    ("allocation_day", f"insert into allocation_day select * from allocation_day where {DAY_ROW}",
     {("month, team, meter, rule, source_group, day, source_sha256, source_row, source_line, namespace, workload, "
       "sharing_mode, split_rule",
       "multiple_fields_uniqueness")}),
    ("allocation_day", f"update allocation_day set amount = 0 where {DAY_ROW}", {("amount", "not_equal_to(0)")}),
    ("allocation_day", "update allocation_day set unit = 'dollars' where meter = 'list_cost'",
     {("meter, unit", "unit_is_the_meters_unit")}),
    ("allocation_day", "update allocation_day set unit = 'USD' where meter = 'gpu_hours'",
     {("meter, unit", "unit_is_the_meters_unit")}),
    ("allocation_day", f"update allocation_day set source_sha256 = 'abc', source_row = 0 where {DAY_ROW}",
     {("source_sha256", "str_matches('^[0-9a-f]{64}$')"), ("source_row", "greater_than_or_equal_to(1)")}),
    ("allocation_day", f"update allocation_day set team = null where {DAY_ROW}", {("team", "not_nullable")}),
    ("allocation_day", "alter table allocation_day drop column workload", {("workload", "column_in_dataframe")}),
    ("allocation_lines", f"insert into allocation_lines select * from allocation_lines where {BILLED_LINE}",
     {(GRAIN, "multiple_fields_uniqueness"), ADDS_UP}),
    ("allocation_lines", f"update allocation_lines set amount = -amount where {BILLED_LINE}",
     {("amount, source_amount", "sign_of_the_source"), ADDS_UP}),
    ("allocation_lines", "update allocation_lines set currency = 'USD' where meter = 'it_energy_kwh'",
     {("meter, currency", "currency_only_on_charge_meters")}),
    ("allocation_lines", "update allocation_lines set meter = 'joules', month = '2026-13' where meter = 'co2e_kg'",
     {("meter", "isin"), ("month", "str_matches")}),
    ("int_gpu_hours", f"insert into int_gpu_hours select * from int_gpu_hours where {GPU_HOUR}",
     {("gpu_uuid, hour_start", "multiple_fields_uniqueness")}),
    ("int_gpu_hours", f"update int_gpu_hours set energy_kwh_low = energy_kwh + 1 where {GPU_HOUR}",
     {("energy_kwh_low, energy_kwh, energy_kwh_high", "range_holds_the_estimate")}),
    ("int_gpu_hours", f"update int_gpu_hours set energy_kwh_high = null where {GPU_HOUR}",
     {("energy_kwh_low, energy_kwh, energy_kwh_high", "range_holds_the_estimate")}),
    ("int_gpu_hours", f"update int_gpu_hours set energy_kwh = 2 * board_max_kwh, energy_kwh_high = 2 * board_max_kwh where {GPU_HOUR}",
     {("energy_kwh, board_max_kwh", "no_hour_above_the_board")}),
    ("int_gpu_hours", f"update int_gpu_hours set util_mean = 1.5, energy_tier = 'guess' where {GPU_HOUR}",
     {("util_mean", "in_range"), ("energy_tier", "isin")}),
], ids=["day-twice", "zero-detail", "unit", "hours-in-usd", "sha-and-row", "no-team", "no-column", "line-twice", "sign-flipped",
        "currency-on-energy", "meter-and-month", "gpu-hour-twice", "low-above-energy", "known-energy-no-high",
        "above-the-board", "util-and-tier"])
def test_growing_tables_checked_in_sql_as_pandera_finds(demo_wh, table, breakage, expected):
    """Tables that grow with the bill or the fleet (line-level marts, gpu_hours) are validated in
    SQL, since they outgrow pandas: the same checks of the same model, with the same findings
    (rows counted, example row quoted) as pandera over the frame."""
    con = copy_of(demo_wh, table)
    con.execute(breakage)
    in_sql, by_pandera = sql_contract_failures(con, table, VALIDATED[table]), pandas_contract_failures(con, table, VALIDATED[table])
    assert table in IN_SQL and in_sql == by_pandera
    found = {f[1:3] for f in in_sql}
    assert len(found) == len(expected) and all(any(col == c and chk.startswith(w) for col, chk in found) for c, w in expected)


def test_credits_and_corrections_may_be_negative(demo_wh):
    """Money and billed GPU-hours go negative on credits and corrections: no contract forbids it."""
    con = copy_of(demo_wh, "team_month", "allocation_lines")
    con.execute("update team_month set billed_cost = -billed_cost, effective_cost = -effective_cost, gpu_hours = -5")
    con.execute("update allocation_lines set amount = -amount, source_amount = -source_amount where meter = 'gpu_hours'")
    assert located(con, "team_month") == located(con, "allocation_lines") == set()


@pytest.mark.parametrize("breakage, expected", [
    pytest.param("update team_month set facility_energy_kwh_low = facility_energy_kwh_high + 1 where team = 'research'",
                 {("facility_energy_kwh_low, facility_energy_kwh, facility_energy_kwh_high", "facility_energy_range")},
                 id="low-above-high"),
    pytest.param("update team_month set co2e_kg_high = co2e_kg / 2 where team = 'research'",
                 {("co2e_kg_low, co2e_kg, co2e_kg_high", "co2e_range")}, id="high-below-central"),
    pytest.param("update team_month set it_energy_kwh = -1 where team = 'research'",
                 {("it_energy_kwh", "greater_than_or_equal_to(0)")}, id="negative-energy"),
    pytest.param("update team_month set currency = 'usd' where team = 'research'",
                 {("currency", "str_matches('^[A-Z]{3}$')")}, id="currency-code"),
    # pandas' duplicated() takes two null currencies as equal: two energy-only rows of one team
    # and month are the same row twice, while the team's USD row stays distinct
    pytest.param("insert into team_month select * replace (null as currency) from team_month where team = 'research' "
                 "union all select * replace (null as currency) from team_month where team = 'research'",
                 {("month, team, currency", "multiple_fields_uniqueness")}, id="null-currency-twice"),
])
def test_team_month_contract(demo_wh, breakage, expected):
    con = copy_of(demo_wh, "team_month")
    con.execute(breakage)
    assert located(con, "team_month") == {("team_month", *e) for e in expected}


def test_team_month_failure_names_the_row(demo_wh):
    con = copy_of(demo_wh, "team_month")
    con.execute("insert into team_month select * replace (null as currency) from team_month where team = 'research' "
                "union all select * replace (null as currency) from team_month where team = 'research'")
    con.execute("update team_month set it_energy_kwh = -1 where team = 'search'")
    found = {f[2]: f for f in contract_failures(con, "team_month", VALIDATED["team_month"])}
    assert found["multiple_fields_uniqueness"][3:] == (2, "month=2026-10 team=research currency=null")
    assert found["greater_than_or_equal_to(0)"][3:] == (1, "it_energy_kwh=-1.0 at month=2026-10 team=search currency=USD")


@pytest.mark.parametrize("breakage, expected", [
    pytest.param("update team_energy_lines set it_energy_kwh_low = 2 * it_energy_kwh + 1 where "
                 + first_row("team_energy_lines", "basis = 'measured'"),
                 {("it_energy_kwh_low, it_energy_kwh, it_energy_kwh_high", "it_energy_range")}, id="low-above-central"),
    pytest.param("update team_energy_lines set facility_energy_kwh_high = 0 where "
                 + first_row("team_energy_lines", "basis = 'estimated'"),
                 {("facility_energy_kwh_low, facility_energy_kwh, facility_energy_kwh_high", "facility_energy_range")},
                 id="high-below-central"),
    pytest.param("update team_energy_lines set co2e_kg = -co2e_kg - 1", {("co2e_kg", "greater_than_or_equal_to(0)"),
                 ("co2e_kg_low, co2e_kg, co2e_kg_high", "co2e_range")}, id="negative-co2e"),
    pytest.param("update team_energy_lines set share = 1.2", {("share", "in_range(0, 1)")}, id="share"),
    pytest.param("update team_energy_lines set basis = 'guessed'", {("basis", "isin(['measured', 'estimated'])")},
                 id="basis"),
])
def test_team_energy_lines_contract(demo_wh, breakage, expected):
    con = copy_of(demo_wh, "team_energy_lines")
    con.execute(breakage)
    assert located(con, "team_energy_lines") == {("team_energy_lines", *e) for e in expected}


def test_two_energy_lines_of_one_resource_reach_a_team_as_two_rows(tmp_path):
    """research's own measured line and its proportional share of the untagged namespace's line
    on the same node: same zone, basis, resource and idle flag, two rows, both right. Why
    team_energy_lines declares no uniqueness over those columns."""
    hours = [GpuHour("ip-1", "GPU-a", h, 1.0, 0.9, {ns: 120}) for h, ns in enumerate(["llm"] * 6 + ["other"] * 2)]
    con = build(tmp_path, [Charge("100.00", {"team": "platform"}, "i-node", gpu_hours=8.0)], hours,
                Config(namespace_teams={"llm": "research"}, hosts={"ip-1": "i-node"}, allocation={"untagged": "proportional"}))
    rows = con.execute("select team, zone, basis, resource_id, is_idle, it_energy_kwh from team_energy_lines "
                       "order by it_energy_kwh").fetchall()
    assert [r[:5] for r in rows] == [("research", "aws:us-east-1", "measured", "i-node", False)] * 2
    assert [r[5] for r in rows] == pytest.approx([2.0, 6.0])
    assert located(con, "team_energy_lines") == set()


def reconcile(con: duckdb.DuckDBPyConnection) -> None:
    apply_config(con, Config())    # cfg_meters: the money quantum
    con.execute(f"create or replace table reconciliation as {read_sql('30_marts', 'reconciliation.sql')}")


def test_a_cent_lost_in_the_chargeback_does_not_reconcile(demo_wh):
    con = copy_of(demo_wh, "allocation_lines", "int_charges_teams", "source_files", "invoices", "int_cost_pool")
    reconcile(con)
    assert located(con, "reconciliation") == set()
    before = dict(con.execute("select invoice_id, difference from reconciliation where basis = 'invoice' and status = 'reconciled'").fetchall())
    assert len(before) == 3      # the two USD invoices and the EUR account's
    con.execute("update allocation_lines set amount = amount - 0.01 where "
                + first_row("allocation_lines", "team = 'research' and meter = 'billed_cost'"))
    reconcile(con)
    (found,) = contract_failures(con, "reconciliation", VALIDATED["reconciliation"])
    assert found[:4] == ("reconciliation", "allocated_billed_cost, export_billed_cost", "allocation_keeps_every_cent", 1)
    assert found[4].startswith("allocated_billed_cost=") and "basis=invoice" in found[4]
    # the invoice it belongs to no longer reconciles either, and says by how much
    ((invoice, status, difference),) = con.execute(
        "select invoice_id, status, difference from reconciliation where status <> 'reconciled'").fetchall()
    assert status == "differs" and difference == before[invoice] - Decimal("0.01")


@pytest.mark.parametrize("breakage, expected", [
    pytest.param("update reconciliation set difference = 0.01 where " + first_row("reconciliation", "true"),
                 {("basis, invoice_amount, difference", "difference_is_against_the_basis")}, id="cent-over"),
    pytest.param("update reconciliation set allocated_billed_cost = null, difference = null",
                 {("allocated_billed_cost", "not_nullable"), ("difference", "not_nullable"),
                  ("allocated_billed_cost, export_billed_cost", "allocation_keeps_every_cent"),
                  ("basis, invoice_amount, difference", "difference_is_against_the_basis")}, id="nothing-allocated"),
    pytest.param("update reconciliation set invoice_amount = null where " + first_row("reconciliation", "basis = 'invoice'"),
                 {("basis, invoice_amount, difference", "difference_is_against_the_basis")}, id="invoice-without-amount"),
    pytest.param("insert into reconciliation select * from reconciliation where " + first_row("reconciliation", "true"),
                 {("month, currency, invoice_id, basis", "multiple_fields_uniqueness")}, id="invoice-twice"),
])
def test_reconciliation_contract(demo_wh, breakage, expected):
    con = copy_of(demo_wh, "reconciliation")
    con.execute(breakage)
    assert located(con, "reconciliation") == {("reconciliation", *e) for e in expected}


SPOT = first_row("findings_month", "finding = 'spot_candidate'")


@pytest.mark.parametrize("breakage, expected", [
    pytest.param(f"update findings_month set low = value + 1 where {SPOT}",
                 {("low, value, high", "value_within_its_range")}, id="low-above-value"),
    pytest.param(f"update findings_month set high = value / 2 where {SPOT}",
                 {("low, value, high", "value_within_its_range")}, id="high-below-value"),
    pytest.param(f"update findings_month set finding = 'spot' where {SPOT}", {("finding", f"isin({FINDINGS})")},
                 id="unknown-finding"),
    pytest.param(f"insert into findings_month select * from findings_month where {SPOT}",
                 {("month, finding, subject", "multiple_fields_uniqueness")}, id="subject-twice"),
    pytest.param("update findings_month set energy_kwh = -1", {("energy_kwh", "greater_than_or_equal_to(0)")},
                 id="negative-energy"),
])
def test_findings_month_contract(demo_wh, breakage, expected):
    con = copy_of(demo_wh, "findings_month")
    con.execute(breakage)
    assert located(con, "findings_month") == {("findings_month", *e) for e in expected}
