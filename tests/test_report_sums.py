"""What the chargeback prints adds up and says what it means: rows to their printed total, idle
time unknown where nothing observed it, one warehouse hash for one warehouse state, and an empty
month refused by every monthly report alike."""
from __future__ import annotations

from decimal import Decimal

import duckdb
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pipelines.cli import main
from reports.render import money, rounding_line, shown_amount
from tests.pdf_helpers import text

MONTH = "2026-10"
AMOUNTS = st.lists(st.decimals(min_value=-10**6, max_value=10**6, places=4, allow_nan=False), min_size=1, max_size=30)


@given(AMOUNTS)
def test_printed_rows_and_the_rounding_line_add_to_the_printed_total(values):
    rows = [{"billed_cost": v} for v in values]
    line = rounding_line(rows, ("billed_cost",))
    printed = sum(shown_amount(v) for v in values) + (line["billed_cost"] if line else 0)
    assert printed == shown_amount(sum(values))


def test_the_demo_prints_its_rounding_line(chargeback_demo):
    with duckdb.connect(str(chargeback_demo["wh"]), read_only=True) as con:
        rows = [{"billed_cost": b, "effective_cost": e} for b, e in
                con.execute("select billed_cost, effective_cost from team_month_reporting where month = ?", [MONTH]).fetchall()]
    line = rounding_line(rows, ("billed_cost", "effective_cost"))
    body = text(chargeback_demo["out"] / "chargeback.pdf")
    assert line == {"billed_cost": Decimal("0.01"), "effective_cost": Decimal("0.01")}   # 16,614.08 of rows under 16,614.09
    assert f"Rounding {money(line['billed_cost'])} {money(line['effective_cost'])}" in body


def test_idle_is_unknown_not_zero_without_telemetry(chargeback_demo):
    with duckdb.connect(str(chargeback_demo["wh"]), read_only=True) as con:
        blind = [t for (t,) in con.execute("""select team from team_month_reporting where month = ? and gpu_hours > 0
                                              and gpu_hours_observed = 0""", [MONTH]).fetchall()]
    assert blind
    for pdf in (chargeback_demo["out"] / "teams").glob("*.pdf"):
        body = text(pdf)
        if any(f"Team: {t} —" in body for t in blind):
            assert "Effective cost of idle GPU time unknown: no telemetry" in body
            assert "idle GPU time USD 0.00" not in body


def test_chargeback_and_audit_of_one_warehouse_state_print_one_hash(chargeback_demo):
    from pipelines.config import load_config
    from reports.audit import DISCLOSURE_KINDS
    from reports.provenance import provenance
    config = load_config(chargeback_demo["config"])
    with duckdb.connect(str(chargeback_demo["wh"]), read_only=True) as con:
        chargeback = provenance(con, MONTH, config=config)
        audit = provenance(con, MONTH, DISCLOSURE_KINDS, config)
    assert chargeback["warehouse_hash"] == audit["warehouse_hash"]


def test_an_audit_of_a_month_without_data_is_refused_like_the_chargeback(chargeback_demo, tmp_path):
    errors = []
    for report in ("chargeback", "audit"):
        res = CliRunner().invoke(main, ["report", report, "--month", "2026-01", "--warehouse", str(chargeback_demo["wh"]),
                                        "--config", str(chargeback_demo["config"]), "--out", str(tmp_path / report)])
        assert res.exit_code == 1, res.output
        errors.append(res.stderr.strip())
        assert not (tmp_path / report).exists() or not any((tmp_path / report).iterdir())
    assert errors[0] == errors[1]
    assert errors[0].startswith("Error: --month 2026-01: no charges or telemetry for this month")
