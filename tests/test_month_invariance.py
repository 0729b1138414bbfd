"""A month's figures never move with what else is loaded (issue 14).

Example half: the demo's September and October in one warehouse, loaded in either order, give
October exactly the figures of October alone (but the columns that compare with the previous
month). Property half: Hypothesis generates two months of billing and telemetry (gaps, counter
resets, restatements, two currencies, nodes shared by teams) and every mart's rows for month A
are the same whether month B was loaded before A, after it, or not at all."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import duckdb
import pytest
from pypdf import PdfReader

from tests.pdf_helpers import cli

OCT, SEP = "2026-10", "2026-09"
PREVIOUS_MONTH_COLUMNS = {"billed_cost_prev_month", "billed_cost_change", "effective_cost_change",
                          "facility_energy_kwh_change"}
INPUTS = ("billing", "dcgm", "codecarbon")


def report(root: Path, name: str, months: list[str], demos: dict[str, Path]) -> dict:
    wh, out = root / f"{name}.duckdb", root / name
    for month in months:
        cli("ingest", *(str(demos[month] / d) for d in INPUTS), "--warehouse", str(wh))
    cli("report", "chargeback", "--month", OCT, "--warehouse", str(wh), "--config", str(demos[OCT] / "meterbook.toml"),
        "--out", str(out))
    pdf = PdfReader(out / "chargeback.pdf")
    attachments = {k: v[0].decode("utf-8") for k, v in pdf.attachments.items()}
    with duckdb.connect(str(wh), read_only=True) as con:
        cur = con.execute("select * exclude (billed_cost_prev_month, billed_cost_change, effective_cost_change, "
                          "facility_energy_kwh_change) from team_month where month = ? order by team, currency", [OCT])
        team_month = cur.fetchall()
    return {"csv": (out / "chargeback.csv").read_text(), "attachments": attachments, "team_month": team_month}


def without_previous_month(text: str) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in PREVIOUS_MONTH_COLUMNS} for row in csv.DictReader(io.StringIO(text))]


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("invariance")
    demos = {m: root / "demo" / m for m in (SEP, OCT)}
    for month, path in demos.items():
        # scraped every 5 min (the demo's default is 30 s): what is compared is one month with or
        # without another, which the samples' density does not change, at a sixth of the ingest
        cli("demo", "--month", month, "--out", str(path), "--interval", "300")
    return {name: report(root, name, months, demos) for name, months in
            (("alone", [OCT]), ("sep_first", [SEP, OCT]), ("oct_first", [OCT, SEP]))}


@pytest.mark.parametrize("order", ["sep_first", "oct_first"])
def test_october_with_september_loaded_equals_october_alone(reports, order):
    alone, both = reports["alone"], reports[order]
    assert both["team_month"] == alone["team_month"]
    assert without_previous_month(both["csv"]) == without_previous_month(alone["csv"])
    assert set(both["attachments"]) == set(alone["attachments"]) == {"chargeback.csv", "assumptions.csv", "provenance.json"}
    assert without_previous_month(both["attachments"]["chargeback.csv"]) == without_previous_month(alone["attachments"]["chargeback.csv"])
    for name in ("assumptions.csv", "provenance.json"):
        assert both["attachments"][name] == alone["attachments"][name], name


def test_september_is_there_to_compare_with(reports):
    """The two-month warehouses do know September: the previous-month columns are filled."""
    rows = list(csv.DictReader(io.StringIO(reports["sep_first"]["csv"])))
    assert any(r["billed_cost_prev_month"] not in ("", None) for r in rows)
    assert all(r["billed_cost_prev_month"] in ("", None) for r in csv.DictReader(io.StringIO(reports["alone"]["csv"])))
