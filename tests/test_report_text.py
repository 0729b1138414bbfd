"""What a reader sees: the demo chargeback is short and leads with decisions (coverage before the
findings, each naming the team that pays), and no page of the chargeback, a team statement or the
audit prints a warehouse table name, a snake_case identifier or a file path."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from pypdf import PdfReader

from reports.chargeback import TOP_FINDINGS
from reports.labels import has_label
from schemas.findings_month import FINDINGS
from sources.disclosure_format import FIELDS as DISCLOSURE_FIELDS
from sources.reference_data import read_rows
from tests.pdf_helpers import cli

MONTH = "2026-10"
MAX_PAGES = 15   # page 1 says what a range means and totals the savings; the conversion to the reporting
# currency adds a section; the shared-GPU nodes add a Shared GPUs table and three input files to the appendix
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# a folder path: absolute, relative with ./ or ../, or two or more folders before a name with an
# extension; a web address (a dot in its first segment) is a citation, not a path
PATH = re.compile(r"(?:(?<![\w.])/[\w.-]+/[\w./-]+|\.\.?/[\w./-]+|(?<![\w./-])[\w-]+/[\w-]+/[\w./-]*\.[a-z]{2,7}\b)")


def pdftotext(pdf: Path, first: int | None = None, last: int | None = None) -> str:
    """The pages' text laid out as printed (pypdf's layout mode: a table row stays on one line),
    pages first to last (1-based, inclusive). pypdf, not poppler's pdftotext: `make test` installs
    its own dependencies, and no system package beyond Pango is assumed."""
    pages = PdfReader(pdf).pages[(first or 1) - 1:last]
    return "\n".join(p.extract_text(extraction_mode="layout") for p in pages)


@pytest.fixture(scope="module")
def outputs(chargeback_demo) -> dict:
    d = chargeback_demo
    cli("report", "audit", "--month", MONTH, "--warehouse", str(d["wh"]), "--config", str(d["config"]), "--out", str(d["out"]))
    return {**d, "audit": d["out"] / "audit.pdf", "chargeback": d["out"] / "chargeback.pdf",
            "statement": next((d["out"] / "teams").glob("research-*.pdf"))}


# a file's name (lineage names inputs by name and sha256) may hold underscores: not an identifier
FILE_NAME = re.compile(r"(?<![\w/.-])[\w.-]+\.(?:csv|prom|ya?ml|jsonl?|parquet|txt|log|gz)\b")


def leaks(text: str, tables: set[str]) -> dict[str, list[str]]:
    """Identifiers on a page: warehouse table names (those that are not plain words), snake_case,
    and paths. The disclosure format's field names are an input format the audit asks a publisher
    to fill in, so they may be named."""
    text = FILE_NAME.sub(" ", text)
    for field in DISCLOSURE_FIELDS:
        text = re.sub(rf"\b{field}\b", " ", text)
    words = set(re.findall(r"[\w./-]+", text))
    return {"tables": sorted(w for w in words if w in tables and not w.isalpha()),
            "snake_case": sorted(set(SNAKE.findall(text))),
            "paths": sorted(set(PATH.findall(text)))}


def test_the_leak_checks_can_fail():
    found = leaks("from allocation_lines by rule commitment:proportional, see /work/shared/samples/dcgm/x.prom;"
                  " build/demo/2026-10/billing/cur.csv; null = never", {"allocation_lines", "team_month"})
    assert found["tables"] == ["allocation_lines"]
    assert "allocation_lines" in found["snake_case"]
    assert any(p.startswith("/work/shared") for p in found["paths"]) and any(p.startswith("build/demo") for p in found["paths"])
    assert leaks("nvidia.com/content/dam/a100.pdf, GPU-h, i-0a4d000000000001, A100-SXM4-40GB", set()) == \
        {"tables": [], "snake_case": [], "paths": []}


@pytest.mark.parametrize("doc", ["chargeback", "statement", "audit"])
def test_no_table_name_identifier_or_path_on_any_page(outputs, doc):
    with duckdb.connect(str(outputs["wh"]), read_only=True) as con:
        # the warehouse's own registry: every table and view it holds, raw, staged or mart
        tables = {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}
    assert {"allocation_lines", "team_month", "findings_ranked", "charges"} <= tables
    assert leaks(pdftotext(outputs[doc]), tables) == {"tables": [], "snake_case": [], "paths": []}


def test_demo_chargeback_is_short_and_page_one_leads_with_coverage(outputs):
    pdf = outputs["chargeback"]
    assert len(PdfReader(pdf).pages) <= MAX_PAGES
    first = pdftotext(pdf, 1, 1)
    order = [first.find(s) for s in ("Per team", "Telemetry coverage", "Findings with the most money at stake")]
    assert -1 not in order and order == sorted(order), order
    with duckdb.connect(str(outputs["wh"]), read_only=True) as con:
        share = con.execute("select gpu_hours_telemetry_share from telemetry_month where month = ?", [MONTH]).fetchone()[0]
        dark = [r[0] for r in con.execute("""select team from team_coverage_month
                                              where month = ? and gpu_hours > 0 and not has_telemetry""", [MONTH]).fetchall()]
    assert f"Telemetry covers {share * 100:.0f} % of billed GPU-hours" in " ".join(first.split())
    for team in dark:
        row = next(line for line in first.splitlines() if line.strip().startswith(team[:8]))  # a long name wraps in its cell
        assert "no telemetry" in row and "0.0" not in row.split("no telemetry")[1], row


def test_page_one_findings_name_the_team_that_pays(outputs):
    """Each finding on page 1 names the team charged for its resource (allocation), not its tag:
    the shared host i-0a4d...0001 is tagged platform but charged to research and search."""
    with duckdb.connect(str(outputs["wh"]), read_only=True) as con:
        top = con.execute("""select subject, paying_team, team from findings_ranked
                             where month = ? and section = 'decision' and material order by rank limit ?""",
                          [MONTH, TOP_FINDINGS]).fetchall()
    assert any(paying != tagged for _, paying, tagged in top if tagged), "the demo should hold a tag/payer mismatch"
    first = pdftotext(outputs["chargeback"], 1, 1).splitlines()
    for subject, paying, tagged in top:
        i = next(i for i, line in enumerate(first) if subject in line)
        row = " ".join(first[max(i - 2, 0):i + 2])   # a long team name wraps in its cell
        assert paying[:6] in row, row
        if tagged and tagged != paying:
            assert tagged not in row, row


def test_no_break_even_beyond_the_hardware_life_is_a_finding(outputs):
    life = float(next(r["value"] for r in read_rows("assumptions") if r["assumption_id"] == "hardware_lifetime_years"))
    with duckdb.connect(str(outputs["wh"]), read_only=True) as con:
        kept = con.execute("select value from findings_ranked where finding = 'owned_break_even'").fetchall()
        beyond = con.execute("select count(*) from findings_month where finding = 'owned_break_even' and (value is null or value > ?)",
                             [life * 12]).fetchone()[0]
    assert beyond > 0, "the demo should hold a purchase that never pays back within the hardware's life"
    assert all(v is not None and v <= life * 12 for (v,) in kept)


def test_statement_has_month_team_resources_and_its_hash(outputs):
    body = pdftotext(outputs["statement"])
    assert "Statement for research — October 2026" in body and "team 1 of" not in body
    with duckdb.connect(str(outputs["wh"]), read_only=True) as con:
        resources = [r[0] for r in con.execute("""select resource_id from team_resource_month
                                                  where month = ? and team = 'research' and resource_id is not null""", [MONTH]).fetchall()]
    assert resources and all(r in body for r in resources)
    assert re.search(r"statement [0-9a-f]{16}", body) and "By namespace and day" in body


def test_every_identifier_a_report_labels_has_a_label(outputs):
    with duckdb.connect(str(outputs["wh"]), read_only=True) as con:
        rules = {r[0].partition(":")[0] for r in con.execute("select distinct rule from allocation_lines").fetchall()}
        categories = {r[0] for r in con.execute("select distinct category from allocation_lines").fetchall()}
        tiers = {r[0] for r in con.execute("select distinct tier from energy_tiers_month").fetchall()}
    missing = [(k, v) for k, vs in (("rule", rules), ("category", categories), ("tier", tiers), ("finding", FINDINGS))
               for v in vs if not has_label(k, v)]
    missing += [("assumption", r["assumption_id"]) for r in read_rows("assumptions") if not has_label("assumption", r["assumption_id"])]
    assert missing == []



def test_page_one_names_the_cost_its_gpu_spend_is(outputs):
    """The coverage sentence's USD per team is the effective cost of its GPU lines, not its billed
    cost the table above prints (vision: billed 5,977.12, GPU spend at effective cost 6,093): the
    sentence says which cost it is."""
    first = " ".join(pdftotext(outputs["chargeback"], 1, 1).split())
    with duckdb.connect(str(outputs["wh"]), read_only=True) as con:
        dark = con.execute("""select team, gpu_cost from team_coverage_month
                              where month = ? and gpu_hours > 0 and not has_telemetry""", [MONTH]).fetchall()
    assert dark and "of effective GPU spend (USD" in first
    for team, cost in dark:
        assert f"{team} (" in first and f"USD {cost:,.0f})" in first, team
