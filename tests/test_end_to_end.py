"""The spine end to end: demo month -> ingest -> chargeback PDF whose total is the bill's."""
from __future__ import annotations

import csv
import re
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from pipelines.cli import main

MONTH = "2026-10"


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("e2e")
    demo, wh, out = root / "demo", root / "wh.duckdb", root / "reports"
    run = CliRunner()
    for args in (["demo", "--month", MONTH, "--out", str(demo)],
                 ["ingest", str(demo / "billing"), str(demo / "invoices"), str(demo / "dcgm"), "--warehouse", str(wh)],
                 ["report", "chargeback", "--month", MONTH, "--warehouse", str(wh), "--config",
                  str(demo / "meterbook.toml"), "--out", str(out)]):
        res = run.invoke(main, args)
        assert res.exit_code == 0, f"{args[0]}: {res.output} {res.exception!r}"
    return {"demo": demo, "warehouse": wh, "pdf": out / "chargeback.pdf", "csv": out / "chargeback.csv"}


def raw_billed(demo: Path) -> dict[str, Decimal]:
    """Billed cost per billing currency straight from the generated files, without meterbook's readers."""
    cur = next((demo / "billing").glob("cur-*.csv"))
    out = dict(duckdb.sql(f"""
        select BillingCurrency, sum(BilledCost::decimal(38, 12)) from read_csv('{demo / "billing" / "focus-*.csv"}', all_varchar = true)
        group by 1""").fetchall())
    out["USD"] += duckdb.sql(f"""select sum("lineItem/UnblendedCost"::decimal(38, 12))
                                 from read_csv('{cur}', all_varchar = true)""").fetchall()[0][0]
    return out


def raw_billed_total(demo: Path) -> Decimal:
    """The month in USD from the files alone: the USD bills as billed, the EUR bill at each charge
    day's rate (the latest on or before it, the demo's rule), rounded once to the cent, half-even."""
    rates = {r["date"]: Decimal(r["rate"]) for r in csv.DictReader(next((demo / "billing").glob("rates-*.csv")).open(encoding="utf-8"))}
    days = duckdb.sql(f"""select left(ChargePeriodStart, 10), sum(BilledCost::decimal(38, 12))
                          from read_csv('{demo / "billing" / "focus-*.csv"}', all_varchar = true)
                          where BillingCurrency = 'EUR' group by 1""").fetchall()
    eur = sum((a * rates[max(d for d in rates if d <= day)] for day, a in days), Decimal(0))
    return raw_billed(demo)["USD"] + eur.quantize(Decimal("0.01"), ROUND_HALF_EVEN)


def pdf_text(pdf: Path) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(pdf).pages)


def test_pdf_grand_total_equals_sum_of_billed_cost_in_inputs(demo_report):
    text = pdf_text(demo_report["pdf"])
    expected = raw_billed_total(demo_report["demo"]).quantize(Decimal("0.01"))
    # several billing currencies: each invoice in its own, then the EUR bill converted on its own line
    assert re.search(r"EUR\s+508\.95\s+[\d,]+\.\d\d", text), "conversion line missing from the PDF"
    m = re.search(r"Total\s+([\d,]+\.\d\d)", text)
    assert m and Decimal(m.group(1).replace(",", "")) == expected
    assert "reconciled to invoices EUINUS26100001, INV-202610-3333, INV-202610-7777" in " ".join(text.split())


def test_pdf_shows_per_team_cost_gpu_hours_energy_and_co2e(demo_report):
    text = pdf_text(demo_report["pdf"])
    for team in ("research", "search", "platform", "recsys", "vision", "unallocated"):
        assert team in text
    for heading in ("GPU-h billed", "Energy kWh", "CO2e kg", "Reconciliation to the bill", "Data quality",
                    "Assumptions used", "Lineage"):
        assert heading in text


def test_csv_totals_equal_invoice(demo_report):
    # team_month is exact to the invoice; the CSV prints each team's money to the cent, so its
    # sum is the invoice within half a cent per row
    raw = raw_billed_total(demo_report["demo"])
    with duckdb.connect(str(demo_report["warehouse"]), read_only=True) as con:
        assert con.execute("select sum(billed_cost) from team_month_reporting").fetchone()[0] == raw
    total, n = duckdb.sql(f"select sum(billed_cost::decimal(38, 12)), count(*) "
                          f"from read_csv('{demo_report['csv']}', all_varchar = true)").fetchall()[0]
    assert abs(total - raw) <= Decimal("0.005") * n


def test_measured_energy_matches_synthetic_counter(demo_report):
    """Counter-tier energy of the demo equals the counters' own rise (reset-aware) per GPU."""
    with duckdb.connect(str(demo_report["warehouse"]), read_only=True) as con:
        measured = con.execute("select sum(energy_kwh) from int_gpu_hours where energy_tier = 'counter'").fetchone()[0]
    files = sorted(str(p) for p in (demo_report["demo"] / "dcgm").rglob("*.prom"))
    # Independent: sum of positive counter steps per GPU, resets restarting from zero.
    (truth,) = duckdb.sql(f"""
        with s as (
            select regexp_extract(line, 'UUID="([^"]+)"', 1) as gpu,
                   regexp_extract(line, '\\}} (\\S+) (\\S+)$', 2)::bigint as ts,
                   regexp_extract(line, '\\}} (\\S+) (\\S+)$', 1)::double as mj
            from read_csv({files}, columns = {{'line': 'VARCHAR'}}, header = false, delim = '\\x01', quote = '', escape = '')
            where line like 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{%'),
        d as (select mj - lag(mj) over (partition by gpu order by ts) as step, mj from s)
        select sum(case when step >= 0 then step when step < 0 then mj end) / 3.6e9 from d""").fetchall()[0]
    assert measured == pytest.approx(truth, rel=1e-9)


def test_rerun_of_whole_month_is_unchanged(demo_report):
    res = CliRunner().invoke(main, ["ingest", str(demo_report["demo"] / "billing"), "--warehouse",
                                    str(demo_report["warehouse"]), "--json"])
    assert res.exit_code == 0
    assert '"status": "loaded"' not in res.stdout


def test_allocation_conserves_every_meter_of_the_demo_month(demo_report):
    with duckdb.connect(str(demo_report["warehouse"]), read_only=True) as con:
        bad = con.execute("""
            select s.meter, sum(s.amount), (select sum(l.amount) from allocation_lines l where l.meter = s.meter)
            from int_alloc_sources s group by s.meter
            having sum(s.amount) <> (select sum(l.amount) from allocation_lines l where l.meter = s.meter)""").fetchall()
        allocated = dict(con.execute("select currency, sum(amount) from allocation_lines where meter = 'billed_cost' group by 1").fetchall())
        unallocated = con.execute("select sum(billed_cost) from team_month where team = 'unallocated'").fetchone()[0]
    assert bad == []
    assert allocated == raw_billed(demo_report["demo"])
    assert unallocated > 0      # the untagged c5 instance stays visible, never dropped


def test_demo_month_findings_are_sensible(demo_report):
    """The planted defects come out: the 24 % pool, the idle GPU, the steady on-demand instance,
    the telemetry gap, and the scaling family (CodeCarbon runs ingested here)."""
    from pipelines.config import load_config
    from pipelines.stages import run_stages
    from pipelines.warehouse import connect
    res = CliRunner().invoke(main, ["ingest", str(demo_report["demo"] / "codecarbon"), "--warehouse", str(demo_report["warehouse"])])
    assert res.exit_code == 0, res.output
    with connect(demo_report["warehouse"]) as con:      # with the macros the stages use
        run_stages(con, load_config(demo_report["demo"] / "meterbook.toml"))
        got = {}
        for finding, subject, value, detail in con.execute("select finding, subject, value, detail from findings_month").fetchall():
            got.setdefault(finding, {})[subject] = (value, detail)
    low = got["low_utilization"]
    assert len(low) == 2 and all(s.startswith("ip-10-0-1-11/") and v == pytest.approx(48) and "24%" in d
                                 for s, (v, d) in low.items())
    assert got["idle_gpu_hours"]["i-0a4d000000000001"][0] == pytest.approx(48)
    assert "i-0a6500000000004" in got["commitment_candidate"]
    assert got["gpu_hours_gap"]["i-0a6500000000003"][0] == pytest.approx(6)
    value, detail = got["scaling_efficiency"]["resnet-sweep"]
    assert 0 < value < 1 and "serial fraction 0.050" in detail and "vs 8 used" in detail


def test_chargeback_csv_has_one_row_per_team_and_unallocated_is_visible(demo_report):
    teams = [r[0] for r in duckdb.sql(f"select team from read_csv('{demo_report['csv']}', all_varchar = true)").fetchall()]
    assert len(teams) == len(set(teams)) and "unallocated" in teams


def test_a_warehouse_of_two_months_allocates_each_as_if_alone(demo_report, tmp_path):
    """The warehouse grows month by month: a month's chargeback must not change because another
    month sits beside it (allocation groups once spanned months and split October's bill over
    November's teams too)."""
    run = CliRunner()
    nov, both = tmp_path / "nov", tmp_path / "both.duckdb"
    demo = demo_report["demo"]
    for args in (["demo", "--month", "2026-11", "--out", str(nov)],
                 ["ingest", str(demo / "billing"), str(demo / "dcgm"), str(nov / "billing"), str(nov / "dcgm"),
                  "--warehouse", str(both)],
                 # the build a chargeback runs first (its PDF is not read here)
                 ["build", "--warehouse", str(both), "--config", str(demo / "meterbook.toml")]):
        res = run.invoke(main, args)
        assert res.exit_code == 0, f"{args[0]}: {res.output} {res.exception!r}"
    meters = "team, currency, billed_cost, effective_cost, gpu_hours, idle_gpu_hours, facility_energy_kwh, co2e_kg"
    query = f"select {meters} from team_month where month = ? order by all"
    with duckdb.connect(str(demo_report["warehouse"]), read_only=True) as alone, \
         duckdb.connect(str(both), read_only=True) as con:
        assert con.execute(query, [MONTH]).fetchall() == alone.execute(query, [MONTH]).fetchall()
        assert con.execute("select month, max(abs(difference)) from reconciliation group by 1 order by 1").fetchall() == [
            ("2026-10", 0), ("2026-11", 0)]
        assert con.execute("select count(*) from contract_findings").fetchone()[0] == 0
