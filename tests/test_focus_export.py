"""`meterbook export focus`: FOCUS that passes the FinOps validator's rules, with exact decimals."""
from __future__ import annotations

import collections
import csv
import hashlib
import re
from decimal import Decimal

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.focus_rules import validate_focus

RULES = "billing/schemas/focus-1.2-rules__focus_validator__model-1.2.json"


@pytest.fixture(scope="module")
def export(demo_billing):
    res = CliRunner().invoke(main, ["export", "focus", "--month", "2026-10", "--version", "1.2",
                                    "--warehouse", str(demo_billing / "wh.duckdb"),
                                    "--config", str(demo_billing / "demo" / "meterbook.toml"),
                                    "--out", str(demo_billing / "focus-2026-10")])
    assert res.exit_code == 0, res.output + repr(res.exception)
    return demo_billing


def typed_view(con: duckdb.DuckDBPyConnection, parquet) -> None:
    """The Parquet export as the rules read a file: text, date/times in FOCUS's ISO 8601 Z form."""
    types = con.execute(f"describe select * from '{parquet}'").fetchall()
    cols = ", ".join(f"strftime(\"{c}\", '%Y-%m-%dT%H:%M:%SZ') as \"{c}\"" if t == "TIMESTAMP" else f"\"{c}\"::varchar as \"{c}\""
                     for c, t, *_ in types)
    # a table, not a view: each of the rules would convert every column again
    con.execute(f"create table f as select {cols} from '{parquet}'")


def test_demo_export_passes_every_applicable_focus_rule(export, samples):
    # the Parquet, typed as a file reader sees it (the CSV holds the same decimals as text)
    con = duckdb.connect()
    typed_view(con, export / "focus-2026-10.parquet")
    results = validate_focus(con, "f", samples / RULES)
    status = collections.Counter(r.status for r in results)
    failed = [(r.rule_id, r.failing_rows, r.text) for r in results if r.status == "fail"]
    assert not failed
    assert status["pass"] > 250          # the mandatory columns, types, formats and allowed values


def test_reexport_of_a_focus_12_input_keeps_every_column_and_value(export):
    """Every column of the demo's FOCUS 1.2 file (x_ ones too) comes out, each written value as it
    was: text equal, decimals equal, date/times the same instant as TIMESTAMP."""
    src = next((export / "demo" / "billing").glob("focus-1.2_aws-111122223333_*.csv"))
    pq = export / "focus-2026-10.parquet"
    con = duckdb.connect()
    con.execute(f"create view i as select row_number() over () as rn, * from read_csv('{src}', all_varchar = true, header = true)")
    inputs = [c for c in (r[0] for r in con.execute("describe i").fetchall()) if c != "rn"]
    out = dict(con.execute(f"select column_name, column_type from (describe select * from '{pq}')").fetchall())
    assert len(inputs) == 59 and not set(inputs) - set(out)
    sha = hashlib.sha256(src.read_bytes()).hexdigest()
    def same(c: str) -> str:
        if out[c].startswith("DECIMAL"):
            return f"i.{c}::decimal(38, 12) = o.{c}"
        if out[c] == "TIMESTAMP":
            return f"strptime(i.{c}, '%Y-%m-%dT%H:%M:%SZ') = o.{c}"
        return f"i.{c} = o.{c}"
    differ = con.execute(f"""select {', '.join(f"count(*) filter (where coalesce(i.{c}, '') <> '' and not coalesce({same(c)}, false))"
                                                 for c in inputs)}, count(*)
                             from i join '{pq}' o on o.x_SourceFileSha256 = '{sha}' and o.x_SourceRow = i.rn""").fetchall()[0]
    assert differ[-1] == 502   # 330 rows, then 72 hourly rows of the MIG node and 100 of the time-sliced one
    assert dict(zip(inputs, differ)) == dict.fromkeys(inputs, 0)
    assert out["ChargePeriodStart"] == out["BillingPeriodEnd"] == "TIMESTAMP"


def test_allocation_rides_in_x_columns(export):
    pq = export / "focus-2026-10.parquet"
    rows = duckdb.sql(f"""select count(*) filter (where x_Team is null), count(*) filter (where x_AllocatedShare not between 0 and 1),
                                 count(*) filter (where x_AllocationRule = 'telemetry_split'),
                                 count(*) filter (where json_array_length(x_Allocations) > 1)
                          from '{pq}'""").fetchall()[0]
    assert rows[:2] == (0, 0) and rows[2] > 0 and rows[3] > 0


def test_csv_costs_exact_plain_notation(export):
    """The CSV carries the Parquet's decimals (a cost of 32.7726 stays 32.7726), in plain notation."""
    with open(export / "focus-2026-10.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    exact = duckdb.sql(f"select x_SourceFileSha256, x_SourceRow, x_SourceLine, BilledCost, EffectiveCost, ListCost, ContractedCost "
                       f"from '{export / 'focus-2026-10.parquet'}'").fetchall()
    by_key = {(s, str(r), str(n)): costs for s, r, n, *costs in exact}
    for col_i, col in enumerate(("BilledCost", "EffectiveCost", "ListCost", "ContractedCost")):
        assert all(re.fullmatch(r"-?\d+(\.\d*[1-9])?", r[col]) for r in rows), col
        assert all(Decimal(r[col]) == by_key[(r["x_SourceFileSha256"], r["x_SourceRow"], r["x_SourceLine"])][col_i]
                   for r in rows), col
    assert any(len(r["BilledCost"].partition(".")[2]) > 2 for r in rows)    # sub-cent amounts survive
    assert not any(re.fullmatch(r"-?[\d.]+[eE][-+]?\d+", v) for r in rows for v in r.values())    # plain notation
    for col in ("x_EnergyKwh", "x_CO2eKg", "x_GpuHours"):     # to the Wh, the gram, 3.6 s of GPU time
        assert all(re.fullmatch(r"(\d+\.\d{1,3})?", r[col]) for r in rows), col
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["ChargePeriodStart"]) for r in rows)


def test_csv_sums_per_invoice_to_the_reconciled_total(export):
    """Summed per invoice, the CSV's BilledCost is the reconciliation's total to the last decimal,
    and its EffectiveCost the warehouse's (rounding each line to the cent lost 0.12 USD a month)."""
    billed: dict[str, Decimal] = collections.defaultdict(Decimal)
    effective: dict[str, Decimal] = collections.defaultdict(Decimal)
    usd = Decimal(0)
    with open(export / "focus-2026-10.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            billed[r["InvoiceId"]] += Decimal(r["BilledCost"])
            effective[r["InvoiceId"]] += Decimal(r["EffectiveCost"])
            usd += Decimal(r["BilledCost"]) if r["BillingCurrency"] == "USD" else 0
    con = duckdb.connect(str(export / "wh.duckdb"), read_only=True)
    reconciled = dict(con.execute("select invoice_id, export_billed_cost from reconciliation where month = '2026-10'").fetchall())
    charged = dict(con.execute("select invoice_id, sum(effective_cost) from charges group by 1").fetchall())
    con.close()
    assert len(reconciled) == 3 and set(billed) == set(reconciled)      # two USD invoices and the EUR account's
    assert billed == reconciled and effective == charged
    assert usd == Decimal("16614.0868")


def test_rule_engine_catches_a_broken_export(export, samples):
    con = duckdb.connect()
    # a table, not a view: each of the ~300 rules would parse the CSV again
    con.execute(f"""create table f as select * replace (
        case when x_SourceRow = 1 then 'Usgae' else ChargeCategory end as ChargeCategory,
        case when x_SourceRow = 2 then '2026-10-01 00:00:00' else ChargePeriodStart end as ChargePeriodStart)
        from read_csv('{export / 'focus-2026-10.csv'}', all_varchar = true)""")
    failed = {r.rule_id for r in validate_focus(con, "f", samples / RULES) if r.status == "fail"}
    assert "ChargeCategory-C-003-M" in failed or any(r.startswith("ChargeCategory") for r in failed)
    assert any(r.startswith("ChargePeriodStart") for r in failed)


def test_parquet_types_and_totals(export):
    pq = export / "focus-2026-10.parquet"
    types = dict(duckdb.sql(f"select column_name, column_type from (describe select * from '{pq}')").fetchall())
    assert types["BilledCost"].startswith("DECIMAL") and types["EffectiveCost"].startswith("DECIMAL")
    con = duckdb.connect(str(export / "wh.duckdb"), read_only=True)
    # AWS split rows (the demo's EKS node) re-describe their node's line, which carries the split
    charges = con.execute("select sum(billed_cost), sum(effective_cost), count(*) from charges where split_parent_id is null").fetchone()
    team = con.execute("select sum(facility_energy_kwh), sum(co2e_kg) from team_month").fetchone()
    con.close()
    exported = duckdb.sql(f"select sum(BilledCost), sum(EffectiveCost), count(*), sum(x_EnergyKwh), sum(x_CO2eKg) from '{pq}'").fetchall()[0]
    assert exported[:3] == charges
    # every kWh of the month sits on a billed GPU line (all demo telemetry hosts map to instances)
    assert exported[3] == pytest.approx(team[0], rel=1e-9)
    assert exported[4] == pytest.approx(team[1], rel=1e-9)


def test_commitment_status_follows_the_spec_text(export):
    """The two waived model rules, checked as FOCUS 1.2 words them."""
    rows = duckdb.sql(f"""select count(*) filter (where CommitmentDiscountId is null and CommitmentDiscountStatus is not null),
                                 count(*) filter (where CommitmentDiscountId is not null and ChargeCategory = 'Usage'
                                                  and CommitmentDiscountStatus is null),
                                 count(*) filter (where CommitmentDiscountStatus not in ('Used', 'Unused'))
                          from read_csv('{export / 'focus-2026-10.csv'}', all_varchar = true)""").fetchall()[0]
    assert rows == (0, 0, 0)
