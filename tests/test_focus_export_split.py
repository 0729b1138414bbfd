"""`meterbook export focus --version 1.3|1.4`: the chargeback's split as FOCUS split cost
allocation rows, exact per origin charge and per team, passing every rule of the version that
one file can show."""
from __future__ import annotations

import collections
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.focus_rules import validate_focus
from tests.test_focus_export import RULES, typed_view

MONTH = "2026-10"
ORIGIN = "x_SourceFileSha256, x_SourceRow, x_SourceLine"


@pytest.fixture(scope="module")
def exports(demo_billing) -> dict[str, Path]:
    """The demo month as FOCUS 1.3, 1.4 and as the default version."""
    out = {}
    for version in ("1.3", "1.4", None):
        name = f"focus-{(version or 'default').replace('.', '')}"
        args = ["export", "focus", "--month", MONTH, "--warehouse", str(demo_billing / "wh.duckdb"),
                "--config", str(demo_billing / "demo" / "meterbook.toml"), "--out", str(demo_billing / name)]
        res = CliRunner().invoke(main, args + (["--version", version] if version else []))
        assert res.exit_code == 0, res.output + repr(res.exception)
        out[version or "default"] = demo_billing / f"{name}.parquet"
    return out


def columns(parquet: Path) -> list[str]:
    return [r[0] for r in duckdb.sql(f"describe select * from '{parquet}'").fetchall()]


@pytest.mark.parametrize("version", ["1.3", "1.4"])
def test_export_passes_every_evaluable_rule_of_its_version(exports, samples, version):
    con = duckdb.connect()
    typed_view(con, exports[version])
    results = validate_focus(con, "f", samples / RULES, version=version)
    failed = [(r.rule_id, r.failing_rows, r.text) for r in results if r.status == "fail"]
    assert not failed
    added = [r for r in results if r.rule_id.startswith(("Allocated", "ServiceProviderName", "HostProviderName",
                                                         "ContractApplied", "CostAndUsage-D-1"))]
    # every rule the version adds is evaluated on the export, none skipped
    assert len(added) == 47 and {r.status for r in added} == {"pass"}
    assert collections.Counter(r.status for r in results)["pass"] > 340


def test_versions_differ_in_the_provider_columns(exports):
    v13, v14 = columns(exports["1.3"]), columns(exports["1.4"])
    new = {"AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags",
           "ContractApplied", "ServiceProviderName", "HostProviderName"}
    assert new <= set(v13) and {"ProviderName", "PublisherName"} <= set(v13)
    assert set(v13) - set(v14) == {"ProviderName", "PublisherName"}
    assert columns(exports["default"]) == v14           # the newest unless asked


def test_rules_of_13_tell_a_12_file_apart(demo_billing, exports, samples, tmp_path):
    """The 1.2 export lacks 1.3's mandatory provider columns: checked as 1.3 it fails."""
    res = CliRunner().invoke(main, ["export", "focus", "--month", MONTH, "--version", "1.2", "--warehouse",
                                    str(demo_billing / "wh.duckdb"), "--out", str(tmp_path / "f12")])
    assert res.exit_code == 0, res.output
    con = duckdb.connect()
    typed_view(con, tmp_path / "f12.parquet")
    failed = {r.rule_id for r in validate_focus(con, "f", samples / RULES, version="1.3") if r.status == "fail"}
    assert failed == {"CostAndUsage-D-101-M", "CostAndUsage-D-102-M"}


def test_allocated_rows_add_up_to_their_origin_charge(exports):
    rows = duckdb.sql(f"""
        select count(*), count(*) filter (where n < 2), count(*) filter (where billed <> origin_billed),
               count(*) filter (where effective <> origin_effective), count(*) filter (where ratio <> 1)
        from (select {ORIGIN}, count(*) as n, sum(BilledCost) as billed, min(x_OriginBilledCost) as origin_billed,
                     sum(EffectiveCost) as effective, min(x_OriginEffectiveCost) as origin_effective,
                     sum((AllocatedMethodDetails->>'$.Elements[0].AllocatedRatio')::decimal(38, 12)) as ratio
              from '{exports["1.3"]}' where AllocatedMethodId is not null group by all)""").fetchall()[0]
    assert rows[0] > 100 and rows[1:] == (0, 0, 0, 0)


def test_summed_per_team_the_export_is_the_chargeback(exports, demo_billing):
    """Exact decimals: the allocated rows' team sums are team_month's, and the file's total the
    bill's (the allocated rows replace their origin charge, so nothing counts twice)."""
    con = duckdb.connect(str(demo_billing / "wh.duckdb"), read_only=True)
    # per team and billing currency (team_month's grain: the demo's EUR account stays in EUR here)
    chargeback = {(t, c): (b, e) for t, c, b, e in con.execute(
        "select team, currency, billed_cost, effective_cost from team_month where month = ? and currency is not null",
        [MONTH]).fetchall()}
    con.close()
    exported = {(t, c): (b, e) for t, c, b, e in duckdb.sql(
        f"select x_Team, BillingCurrency, sum(BilledCost), sum(EffectiveCost) from '{exports['1.3']}' group by 1, 2").fetchall()}
    assert exported == chargeback
    assert sum(b for (_, c), (b, _) in exported.items() if c == "USD") == Decimal("16614.0868")


def test_summed_per_team_the_exports_energy_and_co2e_are_the_chargebacks(exports, demo_billing):
    """A row's energy and CO2e are its team's as the chargeback allocates them (measured pod
    energy, MIG activity, idle time by the idle rule), not the team's part of the list price:
    search reconciling the file with its chargeback found 46.9 kWh against 30.1. Each origin
    charge keeps its total."""
    con = duckdb.connect(str(demo_billing / "wh.duckdb"), read_only=True)
    meters = ("facility_energy_kwh", "facility_energy_kwh_low", "facility_energy_kwh_high", "co2e_kg", "co2e_kg_low", "co2e_kg_high")
    chargeback = {t: v for t, *v in con.execute(
        f"select team, {', '.join(f'sum({m})' for m in meters)} from team_month where month = ? group by team", [MONTH]).fetchall()}
    origins = dict(con.execute(f"""select {ORIGIN.replace(', ', " || ':' || ")}, x_EnergyKwh from focus_export
                                   where month = ? and x_EnergyKwh > 0""", [MONTH]).fetchall())
    con.close()
    columns = ("x_EnergyKwh", "x_EnergyKwhLow", "x_EnergyKwhHigh", "x_CO2eKg", "x_CO2eKgLow", "x_CO2eKgHigh")
    exported = {t: v for t, *v in duckdb.sql(
        f"select x_Team, {', '.join(f'sum({c})' for c in columns)} from '{exports['1.3']}' group by 1").fetchall()}
    assert chargeback["search"][0] == pytest.approx(30.07, abs=0.01)
    for team, figures in chargeback.items():
        assert exported.get(team, [0] * 6) == pytest.approx(figures, abs=1e-6), team
    kept = dict(duckdb.sql(f"""select {ORIGIN.replace(', ', " || ':' || ")}, sum(x_EnergyKwh) from '{exports['1.3']}'
                               group by all having sum(x_EnergyKwh) > 0""").fetchall())
    assert kept == pytest.approx(origins, abs=1e-9)


def test_reporting_currency_costs_are_the_rows_own(exports, demo_billing):
    """x_BilledCostInReportingCurrency and x_EffectiveCostInReportingCurrency are the row's own
    cost converted: on an allocated row its team's part, not the origin charge's whole amount, so
    summed per team they are the chargeback's team totals in the reporting currency (to the cent:
    the chargeback converts a currency's bill once, the rows line by line)."""
    wrong = duckdb.sql(f"""select count(*) from '{exports['1.3']}'
        where x_BilledCostInReportingCurrency <> (BilledCost * x_ExchangeRate)::decimal(38, 12)
           or x_EffectiveCostInReportingCurrency <> (EffectiveCost * x_ExchangeRate)::decimal(38, 12)""").fetchall()[0][0]
    assert wrong == 0
    con = duckdb.connect(str(demo_billing / "wh.duckdb"), read_only=True)
    chargeback = {t: (b, e) for t, b, e in con.execute(
        "select team, billed_cost, effective_cost from team_month_reporting where month = ?", [MONTH]).fetchall()}
    con.close()
    exported = {t: (b, e) for t, b, e in duckdb.sql(f"""select x_Team, sum(x_BilledCostInReportingCurrency),
        sum(x_EffectiveCostInReportingCurrency) from '{exports['1.3']}' group by 1""").fetchall()}
    assert exported.keys() == chargeback.keys()
    assert all(abs(exported[t][i] - chargeback[t][i]) < Decimal("0.01") for t in chargeback for i in (0, 1)), (exported, chargeback)


def test_unit_price_times_quantity_still_meets_the_cost_on_allocated_rows(exports):
    """Quantities follow the row's list-cost ratio, unit prices stay the origin's."""
    worst = duckdb.sql(f"""select max(abs(ListUnitPrice * PricingQuantity - ListCost)),
                                  max(abs(ContractedUnitPrice * PricingQuantity - ContractedCost))
                           from '{exports['1.3']}' where AllocatedMethodId is not null""").fetchall()[0]
    assert worst[0] < Decimal("1e-9") and worst[1] < Decimal("1e-9")


def test_rule_engine_catches_a_broken_split(exports, samples):
    con = duckdb.connect()
    typed_view(con, exports["1.3"])
    con.execute(f"""create table broken as select * replace (
        case when rn = 1 then (BilledCost::decimal(38, 12) + 0.01)::varchar else BilledCost end as BilledCost,
        case when rn = 2 then replace(AllocatedMethodDetails, '0.', '0.9') else AllocatedMethodDetails end as AllocatedMethodDetails,
        case when rn = 3 then 'other-account' else BillingAccountId end as BillingAccountId)
        from (select *, row_number() over (order by {ORIGIN}, x_Team) as rn from f where AllocatedMethodId is not null)""")
    failed = {r.rule_id for r in validate_focus(con, "broken", samples / RULES, version="1.3") if r.status == "fail"}
    assert {"AllocatedMethodId-C-011-C", "AllocatedMethodDetails-C-010-C", "AllocatedMethodId-C-020-C"} <= failed


def test_the_13_export_ingests_as_13_with_the_same_total(exports, tmp_path):
    """Read back by meterbook's own FOCUS reader: told as 1.3 from its columns, its allocated
    rows loaded as charges (their origin is not in the file), the bill's total once."""
    csv = exports["1.3"].with_suffix(".csv")
    wh = tmp_path / "wh.duckdb"
    res = CliRunner().invoke(main, ["ingest", str(csv), "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(wh), read_only=True)
    version, = con.execute("select format_version from source_files").fetchone()
    total, = con.execute("select sum(billed_cost) from charges where billing_currency = 'USD'").fetchone()
    assert version == "1.3" and total == Decimal("16614.0868")


def test_a_13_input_comes_out_with_its_contract_applied_and_total(tmp_path, samples):
    """A FOCUS 1.3 bill (an origin charge with the provider's split, a charge drawing on a
    contract commitment) written back as 1.3: the split counted once, ContractApplied carried."""
    wh = tmp_path / "wh.duckdb"
    for args in (["ingest", str(Path(__file__).parent / "data" / "focus" / "focus_1.3_origin_and_allocated.csv")],
                 ["export", "focus", "--month", "2026-05", "--version", "1.3", "--out", str(tmp_path / "f")]):
        res = CliRunner().invoke(main, [*args, "--warehouse", str(wh)])
        assert res.exit_code == 0, res.output + repr(res.exception)
    total, applied = duckdb.sql(f"""select sum(BilledCost), list(ContractApplied) filter (where ContractApplied is not null)
                                    from '{tmp_path / 'f.parquet'}'""").fetchall()[0]
    assert total == Decimal("796.48") and len(applied) == 1
    element, = duckdb.sql(f"select unnest(from_json('{applied[0]}'::json->'Elements', '[\"json\"]'))").fetchall()[0]
    assert '"ContractCommitmentId":"CC-SPEND-1"' in element and '"ContractCommitmentAppliedCost":2.0' in element
    con = duckdb.connect()
    typed_view(con, tmp_path / "f.parquet")
    assert not [r.rule_id for r in validate_focus(con, "f", samples / RULES, version="1.3") if r.status == "fail"]
