"""Chargeback PDFs read back with pypdf: totals equal the marts, sections, fonts, attachments,
per-team statements, escaping, determinism, golden text."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from pipelines.cli import main
from reports.render import money
from tests.pdf_helpers import cli, stable, text
from tests.pdfa_rules import violations as pdfa_violations

MONTH = "2026-10"
SCRIPT = "<script>alert(1)</script>"
SECTIONS = ["Top findings", "Per team", "Team: research", "Unallocated and idle", "Findings", "Reconciliation to the bill",
            "Data quality", "Energy by source", "Assumptions used", "Methodology", "Lineage"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    """The demo month with one team tag replaced by a script, ingested and reported with --per-team."""
    root = tmp_path_factory.mktemp("reports")
    cli("demo", "--month", MONTH, "--out", str(root / "demo"))
    focus = next((root / "demo" / "billing").glob("focus-*.csv"))
    focus.write_text(focus.read_text(encoding="utf-8").replace('""team"":""recsys""', f'""team"":""{SCRIPT}""'), encoding="utf-8")
    wh = root / "wh.duckdb"
    d = root / "demo"
    cli("ingest", str(d / "billing"), str(d / "dcgm"), str(d / "codecarbon"), str(d / "disclosures"), "--warehouse", str(wh))
    out = root / "out"
    output = cli("report", "chargeback", "--month", MONTH, "--warehouse", str(wh), "--config", str(d / "meterbook.toml"),
                 "--out", str(out), "--per-team")
    return {"root": root, "wh": wh, "out": out, "config": d / "meterbook.toml", "output": output}


def marts(wh: Path, sql: str, params=()) -> list[tuple]:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def attachment(pdf: Path, name: str) -> str:
    return PdfReader(pdf).attachments[name][0].decode("utf-8")


def test_cli_says_where_it_wrote(demo):
    assert f"wrote {demo['out'] / 'chargeback.pdf'}" in demo["output"]
    assert "teams" in demo["output"]


def test_first_page_totals_equal_the_marts(demo):
    billed, effective, gpu_h, co2e = marts(demo["wh"], """select sum(billed_cost), sum(effective_cost), sum(gpu_hours), sum(co2e_kg)
                                                         from team_month where month = ?""", [MONTH])[0]
    exported = marts(demo["wh"], "select sum(export_billed_cost) from reconciliation where month = ?", [MONTH])[0][0]
    first = PdfReader(demo["out"] / "chargeback.pdf").pages[0].extract_text()
    assert billed == exported
    assert f"USD {money(billed)}" in first and f"USD {money(effective)}" in first
    assert f"{gpu_h:,.0f}" in first and f"{co2e:,.0f} kg" in first
    # no invoices file ingested here: page 1 must not claim an invoice it never saw
    assert "totals equal the loaded exports (no invoice loaded)" in " ".join(first.split())
    assert "reconciled to the invoice" not in first


def test_every_section_is_present(demo):
    body = text(demo["out"] / "chargeback.pdf")
    missing = [s for s in SECTIONS if s not in body]
    assert not missing
    teams = [r[0] for r in marts(demo["wh"], "select team from team_month where month = ?", [MONTH])]
    assert all(f"Team: {t}" in body for t in teams), "one page per team"


def test_sha256_of_every_input_is_in_the_lineage(demo):
    """Every file the month's figures rest on, and only those: a disclosure YAML in the same
    warehouse feeds the audit, not the chargeback."""
    body = re.sub(r"\s", "", text(demo["out"] / "chargeback.pdf"))
    for (sha,) in marts(demo["wh"], "select sha256 from month_files where month = ?", [MONTH]):
        assert sha in body
    (disclosure,) = marts(demo["wh"], "select sha256 from source_files where kind = 'disclosure'")[0]
    assert disclosure not in body


def test_report_and_statements_keep_pdfa_3b_rules(demo):
    """Fonts embedded, identification, metadata equal to the Info dictionary, output intent,
    attachments with their relationship: the PDF/A-3b rules pypdf can check (tests/pdfa_rules.py)."""
    pdfs = [demo["out"] / "chargeback.pdf", *sorted((demo["out"] / "teams").glob("*.pdf"))]
    assert len(pdfs) > 2
    assert {p.name: pdfa_violations(p) for p in pdfs} == {p.name: [] for p in pdfs}


def test_pdfa_rules_catch_what_breaks_conformance(demo, tmp_path):
    """The checker is not vacuous: a plain PDF and a report given a script and a new producer fail it."""
    from pypdf import PdfWriter
    from pypdf.generic import DictionaryObject, NameObject, TextStringObject
    from weasyprint import HTML
    HTML(string="<p>plain</p>").write_pdf(tmp_path / "plain.pdf")
    assert {v.split(":")[0] for v in pdfa_violations(tmp_path / "plain.pdf")} >= {"6.1.3-1", "6.2.2-1", "6.6.2.1-1"}
    w = PdfWriter(clone_from=str(demo["out"] / "chargeback.pdf"))
    w._root_object[NameObject("/OpenAction")] = DictionaryObject(
        {NameObject("/S"): NameObject("/JavaScript"), NameObject("/JS"): TextStringObject("app.alert(1)")})
    w.add_metadata({"/Producer": "pypdf"})
    w.write(tmp_path / "edited.pdf")
    assert {v.split(":")[0] for v in pdfa_violations(tmp_path / "edited.pdf")} == {"6.5.1-1", "6.6.3-1"}


def test_attachments_parse_back_to_the_marts(demo):
    pdf = demo["out"] / "chargeback.pdf"
    rows = list(csv.DictReader(io.StringIO(attachment(pdf, "chargeback.csv"))))
    expected = dict(marts(demo["wh"], "select team, billed_cost from team_month where month = ?", [MONTH]))
    assert {r["team"]: Decimal(r["billed_cost"]) for r in rows} == {k: Decimal(str(v)) for k, v in expected.items()}
    assert (demo["out"] / "chargeback.csv").read_text(encoding="utf-8") == attachment(pdf, "chargeback.csv")
    used = list(csv.DictReader(io.StringIO(attachment(pdf, "assumptions.csv"))))
    assert used and all(r["coefficient_id"] for r in used)
    prov = json.loads(attachment(pdf, "provenance.json"))
    assert {f["sha256"] for f in prov["source_files"]} == {r[0] for r in marts(demo["wh"], "select sha256 from month_files where month = ?", [MONTH])}
    assert prov["warehouse_short"] in text(pdf)
    # the config the figures were allocated with, in full in the JSON and by prefix in the footer
    assert prov["config_sha256"] == hashlib.sha256(demo["config"].read_bytes()).hexdigest()
    assert f"config {prov['config_short']}" in text(pdf)


def test_per_team_statements_hold_only_their_team(demo):
    teams = [r[0] for r in marts(demo["wh"], "select team from team_month where month = ?", [MONTH])]
    statements = sorted((demo["out"] / "teams").glob("*.pdf"))
    assert len(statements) == len(teams)
    seen = set()
    for pdf in statements:
        rows = list(csv.DictReader(io.StringIO(attachment(pdf, "statement.csv"))))
        assert len(rows) == 1
        team = rows[0]["team"].lstrip("'")
        seen.add(team)
        body = text(pdf)
        assert f"Team: {team}" in body
        assert not [t for t in teams if t != team and f"Team: {t}\n" in body + "\n"]
        assert all(f"Team: {t}" not in body for t in teams if t != team and not t.startswith(team))
    assert seen == set(teams)


def test_team_statement_states_unit_economics_in_words(demo):
    """The figures beyond the Lines table have labels and units, read from team_month."""
    per_h, idle = marts(demo["wh"], """select cost_per_effective_gpu_hour, idle_cost from team_month
                                       where month = ? and team = 'research'""", [MONTH])[0]
    body = text(next((demo["out"] / "teams").glob("research-*.pdf")))
    assert f"Effective cost per effective GPU-hour USD {money(per_h)}" in body
    assert f"Effective cost of idle GPU time USD {money(idle)}" in body
    assert "no earlier month for this team" in body and "billed cost prev month" not in body


def test_script_in_a_tag_renders_as_text(demo):
    body = text(demo["out"] / "chargeback.pdf")
    assert f"Team: {SCRIPT}" in body
    from reports.chargeback import build_context, report_html
    from pipelines.config import load_config
    from pipelines.warehouse import connect
    con = connect(demo["wh"])
    try:
        ctx = build_context(con, load_config(demo["config"]), MONTH)
    finally:
        con.close()
    html = report_html(ctx)
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_same_inputs_give_the_same_pdf(demo, tmp_path):
    again = tmp_path / "again"
    cli("report", "chargeback", "--month", MONTH, "--warehouse", str(demo["wh"]), "--config", str(demo["config"]),
        "--out", str(again))
    assert (again / "chargeback.pdf").read_bytes() == (demo["out"] / "chargeback.pdf").read_bytes()
    assert not re.search(r"generated \d{4}-\d\d-\d\d", text(again / "chargeback.pdf"))


def test_report_in_parts_matches_the_single_document(demo, tmp_path):
    """The many-teams path (parts laid out in parallel, then concatenated) on the demo month."""
    from pipelines.config import load_config
    from pipelines.warehouse import connect
    from reports.chargeback import build_context, render_all
    con = connect(demo["wh"])
    try:
        ctx = build_context(con, load_config(demo["config"]), MONTH)
    finally:
        con.close()
    paths = render_all(ctx, tmp_path, per_team=True, workers=2, single_up_to=0)
    parts, single = text(paths[0]), text(demo["out"] / "chargeback.pdf")
    for s in SECTIONS:
        assert s in parts
    assert sorted(re.findall(r"Team: (.+)", parts)) == sorted(re.findall(r"Team: (.+)", single))
    assert PdfReader(paths[0]).attachments.keys() >= {"chargeback.csv", "assumptions.csv", "provenance.json"}
    assert len([p for p in paths if p.parent.name == "teams"]) == len(ctx["teams"])
    # concatenating parts with pypdf must not cost the merged file its PDF/A-3b properties
    assert pdfa_violations(paths[0]) == []


def _rounded_csv(text_: str) -> str:
    """The CSV at displayed precision: money to the cent, other figures to one decimal."""
    out = []
    for r in csv.DictReader(io.StringIO(text_)):
        vals = []
        for k, v in r.items():
            try:
                f = float(v)
                vals.append(f"{f:.2f}" if k.endswith("cost") else f"{f:.1f}")
            except ValueError:
                vals.append(v)
        out.append(",".join(vals))
    return "\n".join(sorted(out)) + "\n"


def test_golden_first_page_and_csv(demo, golden):
    first = PdfReader(demo["out"] / "chargeback.pdf").pages[0].extract_text()
    golden("chargeback_page1.txt", stable(first) + "\n")
    golden("chargeback_teams.csv", _rounded_csv((demo["out"] / "chargeback.csv").read_text(encoding="utf-8")))


def test_unknown_month_is_one_error_line(demo):
    res = CliRunner().invoke(main, ["report", "chargeback", "--month", "2031-01", "--warehouse", str(demo["wh"]),
                                    "--config", str(demo["config"]), "--out", str(demo["root"] / "x")])
    assert res.exit_code == 1 and res.output.startswith("Error:")
    res = CliRunner().invoke(main, ["report", "chargeback", "--month", "10-2026", "--warehouse", str(demo["wh"])])
    assert res.exit_code == 1 and "YYYY-MM" in res.output
