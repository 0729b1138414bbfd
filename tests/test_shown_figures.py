"""A figure shown does not move with the order a double was summed in (core.figures): a value a
few ulps either side of a decimal prints as the decimal does, in every number filter. And a figure
shown in more than one output (chargeback, team statements, audit, chargeback.csv, audit.csv, the
allocation, FOCUS and jobs exports) has the same value and the same range in each."""
from __future__ import annotations

import csv
import json
import math
from decimal import Decimal

import duckdb
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from pypdf import PdfReader

from pipelines.config import load_config
from pipelines.warehouse import connect
from reports.audit import build_audit_context
from reports.render import RANGE_MEANING, money, number, pct, sig, signed
from tests.pdf_helpers import cli

FILTERS = {
    "number": lambda x, p: number(x, p), "money": lambda x, p: money(x, p), "pct": lambda x, p: pct(x, p),
    "sig": lambda x, p: sig(x, p + 1), "signed": lambda x, p: signed(x, p),
}


def nudged(x: float, ulps: int) -> float:
    for _ in range(abs(ulps)):
        x = math.nextafter(x, math.inf if ulps > 0 else -math.inf)
    return x


@given(st.decimals("-1e7", "1e7", places=4, allow_nan=False, allow_infinity=False), st.integers(-8, 8),
       st.integers(0, 3), st.sampled_from(sorted(FILTERS)))
@example(Decimal("4.85"), 1, 1, "number")     # 4.8500000000000005 printed 4.9, 4.8499999999999996 4.8
@example(Decimal("4.85"), -1, 1, "number")
@example(Decimal("0.125"), 1, 2, "money")
@example(Decimal("0.0125"), -1, 1, "pct")
@example(Decimal("-0.05"), 1, 1, "signed")
def test_a_few_ulps_do_not_change_what_is_shown(value: Decimal, ulps: int, places: int, name: str) -> None:
    # sig() shows a tiny magnitude as it is (1.0e-17): a value a few ulps from zero is no value
    # near a decimal, and settling takes noise relative to the value, not to zero
    assume(value != 0 or name != "sig")
    x = float(value)
    assert FILTERS[name](nudged(x, ulps), places) == FILTERS[name](x, places)


def test_figures_keep_their_digits() -> None:
    assert money(12_345_678_901.23) == "12,345,678,901.23"
    assert number(4.85, 2) == "4.85" and number(1234.5) == "1,234" and pct(0.5) == "50 %"
    assert signed(-0.04) == "+0.0" and signed(1234.56, 1) == "+1,234.6"
    assert money(Decimal("0.125")) == "0.12" and money(None) == "–" and money(-0.001) == "0.00"


# ---------------------------------------------------------------- one figure, one range, every output


DEMO_MONTH = "2026-10"
# team_month's figures as chargeback.csv names them -> the audit's meter, the allocation export's
# meter and the FOCUS export's x_ column (each with its _low/_high, Low/High)
SHARED = {"facility_energy_kwh": ("facility_energy_kwh", "facility_energy_kwh", "x_EnergyKwh"),
          "co2e_kg": ("co2e_location_kg", "co2e_kg", "x_CO2eKg"),
          "co2e_market_kg": ("co2e_market_kg", "co2e_market_kg", None)}
ENDS = (("", "value", ""), ("_low", "low", "Low"), ("_high", "high", "High"))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict:
    """The demo month through every output that shows a team's energy and CO2e."""
    root = tmp_path_factory.mktemp("shown")
    d, wh, out = root / "demo", root / "wh.duckdb", root / "out"
    cli("demo", "--month", DEMO_MONTH, "--out", str(d))
    cli("ingest", *(str(d / k) for k in ("billing", "invoices", "dcgm", "codecarbon", "disclosures", "work", "grid",
                                         "instruments")), "--warehouse", str(wh))
    common = ["--month", DEMO_MONTH, "--warehouse", str(wh), "--config", str(d / "meterbook.toml")]
    cli("report", "chargeback", *common, "--out", str(out), "--per-team")
    cli("report", "audit", *common, "--out", str(out))
    cli("export", "allocation", *common, "--out", str(out))
    cli("export", "focus", *common, "--out", str(out / "focus"))
    cli("export", "jobs", *common, "--out", str(out / "jobs"))
    return {"out": out, "wh": wh}


def _csv(path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _attachment(pdf, name: str) -> bytes:
    return PdfReader(pdf).attachments[name][0]


def _page_one(pdf) -> str:
    return " ".join(PdfReader(pdf).pages[0].extract_text().split())


def _close(a: float | None, b: float | None) -> bool:
    """Equal as shown: the outputs keep 12 or more digits, summed in another order at most."""
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _f(x: str | None) -> float | None:
    return None if x in (None, "") else float(x)


def test_every_team_figure_has_one_value_and_one_range_in_every_output(outputs) -> None:
    out = outputs["out"]
    chargeback = {r["team"]: r for r in _csv(out / "chargeback.csv")}
    audit = {(r["entity"], r["meter"]): r for r in _csv(out / "audit.csv") if r["kind"] == "team"}
    con = duckdb.connect()
    allocation = {(t, m): float(a) for t, m, a in con.execute(
        f"select team, meter, sum(amount)::double from '{out / f'allocation-{DEMO_MONTH}.parquet'}' group by all").fetchall()}
    # a FOCUS row is a charge line (x_Team names its largest share): its figures add up to the month's
    focus_cols = [f"{c}{e}" for _, _, c in SHARED.values() if c for _, _, e in ENDS]
    focus = dict(zip(focus_cols, con.execute(
        f"select {', '.join(f'sum({c})::double' for c in focus_cols)} from '{out / 'focus.parquet'}'").fetchone()))
    for figure, (_, _, focus_col) in SHARED.items():
        for suffix, _, focus_end in ENDS:
            if focus_col:
                month = sum(_f(r[f"{figure}{suffix}"]) or 0.0 for r in chargeback.values())
                assert _close(focus[f"{focus_col}{focus_end}"], month), (figure, suffix, "focus")
    compared = 0
    for team, row in chargeback.items():
        for figure, (meter, alloc_meter, _) in SHARED.items():
            for suffix, end, _ in ENDS:
                shown = _f(row[f"{figure}{suffix}"])
                if shown is None:
                    continue
                assert _close(_f(audit[(team, meter)][end]), shown), (team, figure, end, "audit.csv")
                assert _close(allocation.get((team, f"{alloc_meter}{suffix}"), 0.0), shown), (team, figure, end, "allocation")
                compared += 1
    assert compared >= 40


def test_page_one_totals_and_their_ranges_agree_and_say_what_a_range_means(outputs) -> None:
    out = outputs["out"]
    teams = _csv(out / "chargeback.csv")
    statement = json.loads(_attachment(out / "audit.pdf", "statement.json"))
    totals = {t["meter"]: t for t in statement["totals"]}
    charge_page, audit_page = _page_one(out / "chargeback.pdf"), _page_one(out / "audit.pdf")
    for figure, meter in (("facility_energy_kwh", "facility_energy_kwh"), ("co2e_kg", "co2e_location_kg")):
        value, low, high = (sum(float(t[f"{figure}{s}"]) for t in teams) for s in ("", "_low", "_high"))
        assert _close(totals[meter]["value"], value) and _close(totals[meter]["low"], low) and _close(totals[meter]["high"], high)
        # the chargeback prints whole units, the audit one decimal: the same range either way
        assert f"range {number(low)}–{number(high)}" in charge_page, figure
        assert f"{number(low, 1)} – {number(high, 1)}" in audit_page, meter
    meaning = " ".join(RANGE_MEANING.split())
    assert meaning in charge_page and meaning in audit_page
    assert statement["ranges"]["method"] == "interval bounds"


def test_a_teams_statement_prints_the_chargebacks_ranges(outputs) -> None:
    out = outputs["out"]
    for row in _csv(out / "chargeback.csv"):
        if not float(row["co2e_kg"]):
            continue
        (pdf,) = (out / "teams").glob(f"{row['team']}-*.pdf")
        text = " ".join(_page_one(pdf).split())
        for figure in ("facility_energy_kwh", "co2e_kg"):
            value, low, high = (float(row[f"{figure}{s}"]) for s in ("", "_low", "_high"))
            assert f"{number(value)} ({number(low)}–{number(high)})" in text, (row["team"], figure)


def test_own_jobs_show_the_job_exports_figures_in_the_audit(outputs) -> None:
    out = outputs["out"]
    jobs = duckdb.connect().execute(f"""select job_id, team, kwh_per_mtok, kwh_per_mtok_low, kwh_per_mtok_high,
                                               gco2e_per_mtok, gco2e_per_mtok_low, gco2e_per_mtok_high
                                        from '{out / 'jobs.parquet'}' where kwh_per_mtok is not null""").fetchall()
    with connect(outputs["wh"], read_only=True) as con:
        ctx = build_audit_context(con, load_config(None), [], DEMO_MONTH)
    own = [r for r in ctx["work_benchmark"] if r["kind"] == "own job"]
    assert jobs and len(own) == len(jobs)
    shown = sorted((r["kwh_per_mtok"], r["kwh_per_mtok_low"], r["kwh_per_mtok_high"], r["gco2e_per_mtok"],
                    r["gco2e_per_mtok_low"], r["gco2e_per_mtok_high"]) for r in own)
    exported = sorted(tuple(j[2:]) for j in jobs)
    for a, b in zip(shown, exported):
        assert all(_close(x, y) for x, y in zip(a, b)), (a, b)
