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

from core.figures import settled
from pipelines.cli import main
from reports.render import money, pct, sig
from tests.pdf_helpers import cli, stable, structure_problems, text
from tests.pdfa_rules import violations as pdfa_violations

MONTH = "2026-10"
SCRIPT = "<script>alert(1)</script>"
SECTIONS = ["Per team", "Telemetry coverage", "Findings with the most money at stake", "Day by day", "Team: research",
            "Unallocated and idle", "Findings", "Reconciliation to the bill", "Data quality", "Energy by source",
            "Assumptions used", "methodology document", "Lineage"]


@pytest.fixture(scope="module")
def demo(chargeback_demo) -> dict:
    """The demo month with one team tag replaced by a script (tests/conftest.py, shared)."""
    return chargeback_demo


@pytest.fixture(scope="module")
def ctx(demo) -> dict:
    """The demo month's report context, built once for the tests that render it themselves."""
    from pipelines.config import load_config
    from pipelines.warehouse import connect
    from reports.chargeback import build_context
    con = connect(demo["wh"])
    try:
        return build_context(con, load_config(demo["config"]), MONTH)
    finally:
        con.close()


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
                                                         from team_month_reporting where month = ?""", [MONTH])[0]
    # each billing currency's export lines are what its teams were billed in it; converted, the page's total
    exported = marts(demo["wh"], "select currency, sum(export_billed_cost) from reconciliation where month = ? group by 1", [MONTH])
    by_currency = marts(demo["wh"], """select currency, sum(billed_cost), sum(billed_cost_reporting) from team_currency_month
                                       where month = ? group by 1""", [MONTH])
    first = PdfReader(demo["out"] / "chargeback.pdf").pages[0].extract_text()
    assert sorted(exported) == sorted((c, b) for c, b, _ in by_currency)
    assert billed == sum(r for _, _, r in by_currency)
    assert f"USD {money(billed)}" in first and f"USD {money(effective)}" in first
    assert f"{gpu_h:,.0f}" in first and f"{co2e:,.0f} kg" in first
    # no invoices file ingested here: page 1 must not claim an invoice it never saw
    assert "totals equal the loaded exports (no invoice loaded)" in " ".join(first.split())
    assert "reconciled to the invoice" not in first


def test_every_section_is_present(demo):
    body = text(demo["out"] / "chargeback.pdf")
    missing = [s for s in SECTIONS if s not in body]
    assert not missing
    teams = [r[0] for r in marts(demo["wh"], "select team from team_month_reporting where month = ?", [MONTH])]
    assert all(f"Team: {t}" in body for t in teams), "one page per team"


def test_first_page_holds_the_summary_and_no_summary_page_is_left_empty(demo):
    """Page 1 is the month at a glance, the findings with the most money at stake and the
    savings included; the pages up to the first team's are full: a block that does not fit
    moves whole, and the next section follows it rather than leaving a page of two lines."""
    pages = [p.extract_text() for p in PdfReader(demo["out"] / "chargeback.pdf").pages]
    first = " ".join(pages[0].split())
    for part in ("Per team", "Telemetry coverage", "Findings with the most money at stake", "Savings if every action is taken"):
        assert part in first, part
    front = next(i for i, p in enumerate(pages) if "Team: " in p)
    lines = [len([ln for ln in p.splitlines() if ln.strip()]) for p in pages[:front]]
    assert min(lines) >= 12, lines


def test_fleet_utilization_names_the_gpu_hours_it_is_measured_over(demo):
    """MIG slices and time-sliced GPUs report no utilization: the fleet's utilization is measured
    over the observed GPU-hours that do, and page 1 says over how many."""
    with_util, observed, util = marts(demo["wh"], """select gpu_hours_with_util, gpu_hours_observed, util_mean
                                                      from telemetry_month where month = ?""", [MONTH])[0]
    (expected,) = marts(demo["wh"], """select sum(coverage * util_mean) / sum(coverage) from int_gpu_hours
                                       where util_mean is not null and strftime(hour_start, '%Y-%m') = ?""", [MONTH])[0]
    assert 0 < with_util < observed and util == pytest.approx(expected)
    first = " ".join(PdfReader(demo["out"] / "chargeback.pdf").pages[0].extract_text().split())
    assert f"over the {with_util:,.0f} of {observed:,.0f} observed GPU-hours that report it" in first


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
    expected = dict(marts(demo["wh"], "select team, billed_cost from team_month_reporting where month = ?", [MONTH]))
    # money in the CSV is the mart's, in the currency's minor unit (USD: the cent), plain notation
    assert {r["team"]: r["billed_cost"] for r in rows} == {k: str(Decimal(str(v)).quantize(Decimal("0.01"))) for k, v in expected.items()}
    money = ("billed_cost", "effective_cost", "list_cost", "billed_cost_direct", "billed_cost_idle", "billed_cost_shared")
    assert all(re.fullmatch(r"-?\d+\.\d\d", r[c]) for r in rows for c in money if c in r)
    assert (demo["out"] / "chargeback.csv").read_text(encoding="utf-8") == attachment(pdf, "chargeback.csv")
    used = list(csv.DictReader(io.StringIO(attachment(pdf, "assumptions.csv"))))
    assert used and all(r["coefficient_id"] for r in used)
    prov = json.loads(attachment(pdf, "provenance.json"))
    assert {f["sha256"] for f in prov["source_files"]} == {r[0] for r in marts(demo["wh"], "select sha256 from month_files where month = ?", [MONTH])}
    assert prov["warehouse_short"] in text(pdf)
    # the config the figures were allocated with, in full in the JSON and by prefix in the footer
    assert prov["config_sha256"] == hashlib.sha256(demo["config"].read_bytes()).hexdigest()
    assert f"config {prov['config_short']}" in text(pdf)


def test_provenance_names_files_not_folders(demo):
    """The chargeback's provenance.json reads the same wherever the inputs were kept: each file by
    its name and sha256, the config by its name, as a statement's provenance names them."""
    prov = json.loads(attachment(demo["out"] / "chargeback.pdf", "provenance.json"))
    assert prov["source_files"] and all(set(f) >= {"file", "sha256"} and "path" not in f for f in prov["source_files"])
    assert not [f["file"] for f in prov["source_files"] if "/" in f["file"]]
    assert prov["config_path"] == demo["config"].name
    assert str(demo["root"]) not in json.dumps(prov)


def test_per_team_statements_hold_only_their_team(demo):
    teams = [r[0] for r in marts(demo["wh"], "select team from team_month_reporting where month = ?", [MONTH])]
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
    per_h, idle = marts(demo["wh"], """select cost_per_effective_gpu_hour, idle_cost from team_month_reporting
                                       where month = ? and team = 'research'""", [MONTH])[0]
    body = text(next((demo["out"] / "teams").glob("research-*.pdf")))
    assert f"Effective cost per effective GPU-hour USD {money(per_h)}" in body
    assert f"Effective cost of idle GPU time USD {money(idle)}" in body
    assert "No earlier month is loaded for this team" in body and "billed cost prev month" not in body


def test_script_in_a_tag_renders_as_text(demo, ctx):
    body = text(demo["out"] / "chargeback.pdf")
    assert f"Team: {SCRIPT}" in body
    from reports.chargeback import report_html
    html = report_html(ctx)
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_same_inputs_give_the_same_pdf(demo, tmp_path, monkeypatch):
    """Twice the same bytes, and across font paths: the second run has WeasyPrint's HarfBuzz
    subsetter switched off (its fontTools fallback, as on a machine without libharfbuzz-subset);
    where the first run had HarfBuzz, this compares the two paths."""
    import weasyprint.pdf.fonts
    monkeypatch.setattr(weasyprint.pdf.fonts, "harfbuzz_subset", None)
    again = tmp_path / "again"
    cli("report", "chargeback", "--month", MONTH, "--warehouse", str(demo["wh"]), "--config", str(demo["config"]),
        "--out", str(again))
    assert (again / "chargeback.pdf").read_bytes() == (demo["out"] / "chargeback.pdf").read_bytes()
    assert not re.search(r"generated \d{4}-\d\d-\d\d", text(again / "chargeback.pdf"))


def test_report_in_parts_matches_the_single_document(demo, ctx, tmp_path):
    """The many-teams path (parts laid out in parallel, then concatenated) on the demo month."""
    from reports.chargeback import render_all
    paths = render_all(ctx, tmp_path, per_team=True, workers=2, single_up_to=0)
    parts, single = text(paths[0]), text(demo["out"] / "chargeback.pdf")
    for s in SECTIONS:
        assert s in parts
    assert sorted(re.findall(r"Team: (.+)", parts)) == sorted(re.findall(r"Team: (.+)", single))
    assert PdfReader(paths[0]).attachments.keys() >= {"chargeback.csv", "assumptions.csv", "provenance.json"}
    assert _outline(paths[0]) == _outline(demo["out"] / "chargeback.pdf")
    # statements come from parts in worker processes here, in-process in the CLI: the same bytes
    statements = [p for p in paths if p.parent.name == "teams"]
    assert len(statements) == len(ctx["teams"])
    assert {p.name: p.read_bytes() for p in statements} == \
        {p.name: p.read_bytes() for p in (demo["out"] / "teams").glob("*.pdf")}
    # concatenating parts must not cost the merged file its PDF/A-3b properties nor its soundness,
    # and the fonts every part embeds are kept once
    assert pdfa_violations(paths[0]) == []
    assert structure_problems(paths[0]) == []
    files = _font_files(paths[0])
    assert len(files) == len(set(files)) == len(set(_font_files(demo["out"] / "chargeback.pdf")))


def _outline(pdf: Path) -> list[tuple[int, str, int]]:
    """Bookmarks as (depth, title, page index)."""
    reader = PdfReader(pdf)

    def walk(items, depth):
        out = []
        for item in items:
            if isinstance(item, list):
                out += walk(item, depth + 1)
            else:
                out.append((depth, item.title, reader.get_destination_page_number(item)))
        return out
    return walk(reader.outline, 0)


def _font_files(pdf: Path) -> list[bytes]:
    """The embedded font programs, one per font object, as the PDF holds them (decompressed)."""
    reader = PdfReader(pdf)
    seen, out = set(), []
    for page in reader.pages:
        for ref in page["/Resources"].get("/Font", {}).values():
            font = ref.get_object()
            desc = font["/DescendantFonts"][0].get_object()["/FontDescriptor"].get_object()
            stream = desc.raw_get("/FontFile2")
            if stream.idnum not in seen:
                seen.add(stream.idnum)
                out.append(stream.get_object().get_data())
    return out


def test_fonts_are_the_shipped_cut_embedded_whole(demo):
    """No subsetter (HarfBuzz or fontTools, whichever the machine has) touched the embedded fonts:
    they are the files in templates/fonts byte for byte, so the bytes do not depend on the machine."""
    from reports.fonts import FACES, FONT_DIR
    shipped = {(FONT_DIR / name).read_bytes(): name for name in FACES}
    for pdf in [demo["out"] / "chargeback.pdf", next((demo["out"] / "teams").glob("research-*.pdf"))]:
        embedded = [shipped.get(f, f"{len(f)} bytes, not shipped") for f in _font_files(pdf)]
        assert embedded and set(embedded) <= set(FACES) and len(embedded) == len(set(embedded)), (pdf.name, embedded)
        assert "MeterbookSans.ttf" in embedded, pdf.name


def test_every_character_the_reports_print_is_in_the_cut():
    """Templates, CSS and formatters print only characters every shipped face holds (else every
    report would fall back to per-PDF subsetting). Reads the sources, so a new symbol fails here."""
    from fontTools.ttLib import TTFont

    from reports.fonts import FACES, FONT_DIR
    root = Path(__file__).parent.parent
    sources = [*root.glob("templates/**/*.html"), *root.glob("templates/*.css"), *root.glob("sources/reference/*.csv"),
               *(p for p in root.glob("reports/*.py") if p.name != "fonts.py")]   # fonts.py names glyphs it leaves out
    printed = {c for f in sources for c in f.read_text(encoding="utf-8") if ord(c) > 0x7E}
    printed |= set("−×≤≥–…²₂·€µΔσ")
    missing = {name: sorted(printed - {chr(u) for u in TTFont(str(FONT_DIR / name)).getBestCmap()}) for name in FACES}
    assert missing == {name: [] for name in FACES}


def test_stylesheet_declares_every_shipped_face():
    """report.css's @font-face rules name the files reports/fonts.py cuts, family, weight and style
    alike: a face the CSS lacks would be synthesised or taken from the system and embedded whole."""
    from reports.fonts import FACES, FONT_DIR
    css = (FONT_DIR.parent / "report.css").read_text(encoding="utf-8")
    rules = re.findall(r'@font-face \{ font-family: "([^"]+)"; font-weight: (\w+); font-style: (\w+); '
                       r'src: url\("fonts/([^"]+)"\); \}', css)
    assert sorted((file, family, weight, style) for family, weight, style, file in rules) == \
        sorted((file, *face[:3]) for file, face in FACES.items())
    assert css.count("@font-face") == len(rules)


FALLBACK_TEAM = "Команда-данных ★"   # Cyrillic and a star: in the system DejaVu, not in the cut


@pytest.mark.parametrize("subsetter", ["fonttools", "harfbuzz"])
def test_text_outside_the_cut_renders_and_stays_deterministic(ctx, tmp_path, monkeypatch, subsetter):
    """A team tag in scripts the cut lacks: drawn with a system fallback font, which is subset per
    PDF (not embedded whole), on either subsetter WeasyPrint may use, with the same bytes twice."""
    import weasyprint.pdf.fonts
    from weasyprint.text.ffi import harfbuzz_subset

    from reports.chargeback import render_all
    if subsetter == "harfbuzz" and not harfbuzz_subset:
        pytest.skip("libharfbuzz-subset is not installed: WeasyPrint can only subset with fontTools here")
    if subsetter == "fonttools":
        monkeypatch.setattr(weasyprint.pdf.fonts, "harfbuzz_subset", None)   # WeasyPrint's own fallback
    renamed = dict(ctx, team_pages=[dict(p) for p in ctx["team_pages"]], teams=[dict(t) for t in ctx["teams"]])
    page = renamed["team_pages"][0]
    page["team"] = dict(page["team"], team=FALLBACK_TEAM)
    renamed["teams"][0] = page["team"]
    first, second = (render_all(renamed, tmp_path / run)[0] for run in ("a", "b"))
    assert first.read_bytes() == second.read_bytes()
    assert f"Team: {FALLBACK_TEAM}" in text(first).replace("\n", " ")
    from reports.fonts import FACES, FONT_DIR
    shipped = {(FONT_DIR / name).read_bytes() for name in FACES}
    assert [f for f in _font_files(first) if f not in shipped], "a fallback font is embedded"
    assert sum(map(len, _font_files(first))) < 1_000_000, "fonts are subset, not embedded whole"
    assert pdfa_violations(first) == [] and structure_problems(first) == []


@pytest.fixture(scope="module")
def demo_audit(demo) -> Path:
    """The demo month's audit: its disclosure and its teams, and its work log's jobs as a benchmark."""
    audit = demo["root"] / "audit"
    cli("report", "audit", "--month", MONTH, "--warehouse", str(demo["wh"]), "--config", str(demo["config"]),
        "--out", str(audit))
    return audit / "audit.pdf"


def test_every_report_pdf_is_structurally_sound(demo, demo_audit):
    """qpdf's check (via pikepdf) and pypdf find nothing wrong in the chargeback, every statement
    and the audit."""
    pdfs = [demo["out"] / "chargeback.pdf", *sorted((demo["out"] / "teams").glob("*.pdf")), demo_audit]
    assert {p.name: structure_problems(p) for p in pdfs} == {p.name: [] for p in pdfs}
    assert pdfa_violations(demo_audit) == []


def _words(pdf: Path) -> str:
    return " ".join(text(pdf).split())


def test_statements_show_each_jobs_unit_economics_and_the_low_mfu_job_is_a_finding(demo):
    """Every job of the demo's work log is on its team's statement with the job_month figures:
    MFU, and cost, kWh and g CO2e per million tokens (a training job and a serving one)."""
    jobs = marts(demo["wh"], """select team, job_id, workload, mfu, cost_per_mtok, kwh_per_mtok, gco2e_per_mtok, cost_per_k_requests
                                from job_month where month = ? and gpu_hours > 0 order by job_id""", [MONTH])
    assert {(j[1], j[2]) for j in jobs} == {("acme-embed-1b-pretrain", "training"), ("finetune-7b", "training"),
                                            ("ranker-serving", "serving")}
    for team, job_id, _, mfu, per_mtok, kwh, grams, per_k_requests in jobs:
        body = _words(next((demo["out"] / "teams").glob(f"{team}-*.pdf")))
        row = body.split("Unit economics of jobs", 1)[1].split(job_id, 1)[1][:300]
        figures = [pct(mfu, 1), sig(per_mtok), sig(kwh), sig(grams)] + ([sig(per_k_requests)] if per_k_requests else [])
        assert [f for f in figures if f not in row] == [], (job_id, row)
    (subject, cost), = marts(demo["wh"], "select subject, cost_usd from findings_month where month = ? and finding = 'low_mfu'", [MONTH])
    finding = _words(demo["out"] / "chargeback.pdf").split(f"Low model FLOP utilization {subject}", 1)[1][:200]
    assert subject == "finetune-7b" and f"USD {money(cost, 0)}" in finding


def test_the_audit_sets_the_jobs_per_token_figures_beside_the_published_models(demo, demo_audit):
    """The benchmark table: each job's kWh and g CO2e per million tokens from job_month, and the
    demo disclosure's from `meterbook reconstruct` over the tokens it states."""
    section = _words(demo_audit).split("Energy and CO2e per unit of work", 1)[1].split("Own jobs: their share", 1)[0]
    for job_id, kwh, grams in marts(demo["wh"], """select job_id, kwh_per_mtok, gco2e_per_mtok from job_month
                                                   where month = ? and kwh_per_mtok is not null""", [MONTH]):
        assert f"{sig(kwh)} " in section.split(job_id, 1)[1] and sig(grams) in section.split(job_id, 1)[1], job_id
    disclosure = next((demo["root"] / "demo" / "disclosures").glob("*.yaml"))
    (published,) = json.loads(cli("reconstruct", str(disclosure), "--json"))
    tokens = float(re.search(r"^tokens: (\S+)", disclosure.read_text(encoding="utf-8"), re.M).group(1))
    meters = published["meters"]
    kwh = meters["facility_energy_kwh"]["value"] / tokens * 1e6
    grams = meters["co2e_location_kg"]["value"] * 1e3 / tokens * 1e6
    row = section.split(published["model"], 1)[1]
    assert "published" in row and sig(kwh) in row and sig(grams) in row


def test_export_jobs_writes_the_job_month_mart(demo, tmp_path):
    """`export allocation` is #18's; until then `export jobs` is how job_month leaves meterbook."""
    out = cli("export", "jobs", "--month", MONTH, "--warehouse", str(demo["wh"]), "--config", str(demo["config"]),
              "--out", str(tmp_path / "jobs"))
    assert f"wrote {tmp_path / 'jobs.csv'}" in out and f"wrote {tmp_path / 'jobs.parquet'}" in out
    rows = list(csv.DictReader((tmp_path / "jobs.csv").open(encoding="utf-8")))
    expected = marts(demo["wh"], "select job_id, team, effective_cost, kwh_per_mtok from job_month where month = ? order by job_id, team", [MONTH])
    assert [(r["job_id"], r["team"]) for r in rows] == [e[:2] for e in expected]
    assert [float(r["effective_cost"]) for r in rows] == pytest.approx([e[2] for e in expected])
    assert marts(demo["wh"], f"select count(*) from '{tmp_path / 'jobs.parquet'}'") == [(len(expected),)]
    # figures as the reports show them: settled doubles (no 49999999999.99999 tokens), lists as text
    settled_tokens = {r[0]: r[1] for r in marts(demo["wh"], "select job_id, tokens from job_month where month = ?", [MONTH])}
    for r in rows:
        numbers = [v for v in r.values() if re.fullmatch(r"-?[\d.]+(e[+-]\d+)?", v)]
        digits = [len(v.split("e")[0].replace("-", "").replace(".", "").strip("0")) for v in numbers]
        assert numbers and max(digits) <= 13, r
        assert not re.search(r"[\[\]']", ",".join(r.values())), r
        if r["tokens"]:
            assert float(r["tokens"]) == settled(settled_tokens[r["job_id"]])
    assert all(";" in r["assumption_ids"] for r in rows if r["assumption_ids"].count(":") > 3)


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


def test_every_figure_a_statement_lists_by_name_has_words(ctx):
    """The statement's 'Other figures' prints team_month columns the main tables do not: each one
    needs a label, or the reader sees a column name with its underscores taken out."""
    from reports.labels import has_label
    assert ctx["other_columns"], "the demo month has figures beyond the main tables"
    assert [c for c in ctx["other_columns"] if not has_label("meter", c)] == []


def test_carbon_section_names_the_scope_of_rented_gpus(demo):
    """The demo's GPUs are AWS instances: the chargeback's CO2e is the customer's Scope 3
    category 1, said beside the figure with the rule (scope_month)."""
    body = " ".join(text(demo["out"] / "chargeback.pdf").split())
    assert "Electricity of cloud GPUs" in body and "is Scope 3, category 1; their embodied CO2e Scope 3, category 1" in body
    assert "Scopes follow who owns the GPUs" in body and "Market-based CO2e (GHG Protocol Scope 2)" not in body
