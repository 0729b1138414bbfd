"""The methodology appendix is generated from sources/reference and agrees with it (like cog --check)."""
from __future__ import annotations

import csv
import html
import re

import duckdb
import pytest

from pipelines.stages import MARTS
from reports.methodology import methodology_context
from reports.methodology_method import METHODS, method_context
from reports.render import RANGE_MEANING, SCOPE_RULE, environment, figure
from sources.reference_data import REFERENCE_DIR, load_reference, read_rows

NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
# As the one formatter prints figures: 25,000 and 9.895 × 10^14 (− for minus)
PRINTED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?: × 10\^−?\d+)?|\d+(?:\.\d+)?(?: × 10\^−?\d+)?")


def value_of(printed: str) -> float:
    """A number as the formatter printed it, back to its value."""
    mantissa, _, exponent = printed.replace(",", "").partition(" × 10^")
    return float(f"{mantissa}e{exponent.replace('−', '-')}") if exponent else float(mantissa)


@pytest.fixture(scope="module")
def rendered() -> str:
    page = environment().get_template("partials/methodology.html").render(methodology=methodology_context(None))
    return html.unescape(page)


def text_of(page: str) -> str:
    return re.sub(r"<[^>]+>", " ", re.sub(r"\{#.*?#\}", " ", page, flags=re.S))


def test_every_assumption_and_every_file_appears(rendered):
    for r in read_rows("assumptions"):
        assert f">{r['assumption_id']}<" in rendered, r["assumption_id"]
        assert figure(r["value"]) in rendered and r["notes"] in rendered
    for p in REFERENCE_DIR.glob("*.csv"):
        assert f">{p.stem}<" in rendered, p.name


def test_every_number_printed_comes_from_the_reference_files(rendered):
    """A number in the appendix is a cell of a reference CSV (or the README sentence printed
    beside it), or a row count computed from the CSVs; nothing is typed by hand."""
    allowed = set()
    for p in [*REFERENCE_DIR.glob("*.csv"), REFERENCE_DIR / "README.md"]:
        text = p.read_text(encoding="utf-8")   # sources and notes are printed as written (8,760 h)
        allowed |= {float(n) for n in NUMBER.findall(text)} | {value_of(n) for n in PRINTED.findall(text)}
    ctx = methodology_context(None)
    counts = {f["rows"] for f in ctx["files"]} | {s["rows"] for f in ctx["files"] for s in f["sources"]}
    counts |= {v for v in ctx["peers"]["summary"].values() if isinstance(v, int)}
    counts |= {g["count"] for g in ctx["peers"]["uncompared"]}
    printed = PRINTED.findall(text_of(rendered))
    assert printed, "the partial printed no numbers at all"
    stray = sorted({n for n in printed if value_of(n) not in allowed | counts})
    assert stray == []


def test_row_counts_are_the_files_row_counts():
    ctx = methodology_context(None)
    for f in ctx["files"]:
        with open(REFERENCE_DIR / f"{f['name']}.csv", newline="", encoding="utf-8") as fh:
            assert f["rows"] == sum(1 for _ in csv.DictReader(fh)), f["name"]
        assert sum(s["rows"] for s in f["sources"]) <= f["rows"]
    assert [a["id"] for a in ctx["assumptions"]] == [r["assumption_id"] for r in read_rows("assumptions")]


def test_warehouse_reference_tables_give_the_same_appendix():
    con = duckdb.connect()
    load_reference(con)
    assert methodology_context(con) == methodology_context(None)


def test_partial_escapes_text():
    page = environment().from_string('{% include "partials/methodology.html" %}').render(methodology={
        "assumptions": [{"id": "<x>", "value": "1", "unit": "u", "low": "1", "high": "1", "source": "a & b",
                         "retrieved": "", "reasoning": "<script>"}],
        "files": [], "limits": []})
    assert "<script>" not in page and "&lt;script&gt;" in page and "a &amp; b" in page


def test_peer_cross_check_lists_every_compared_and_uncompared_coefficient(rendered):
    """The appendix carries the issue-23 comparison: each compared coefficient with its peers'
    values and the (short) list of coefficients no peer publishes."""
    pc = methodology_context(None)["peers"]
    assert pc["rows"] and pc["summary"]["outside"] == 0
    for r in pc["rows"]:
        assert f">{r['file']}<" in rendered and f">{r['item']} " in rendered, r["coefficient_id"]
        for p in r["peers"]:
            assert f"{p['peer']} {figure(p['value'])}" in rendered, (r["coefficient_id"], p["peer"])
            if p["status"] == "excluded":
                assert p["reason"] in rendered
    listed = text_of(rendered)
    for g in pc["uncompared"]:
        assert all(i in listed for i in g["ids"]), g["group"]


def test_peer_value_outside_its_range_is_printed_as_such():
    row = {"coefficient_id": "embodied:X:gpu", "file": "embodied", "item": "X:gpu", "unit": "kgCO2e", "low": "1", "value": "2", "high": "3",
           "peers": [{"peer": "Boavizta", "value": "9", "year": "", "status": "outside", "reason": ""},
                     {"peer": "LLMCarbon", "value": "0.5", "year": "", "status": "excluded", "reason": "die <only>"}]}
    page = environment().from_string('{% include "partials/methodology.html" %}').render(methodology={
        "assumptions": [], "files": [], "limits": [], "peers": {
            "rows": [row], "uncompared": [],
            "summary": {"peers": ["Boavizta"], "compared": 1, "peer_values": 2, "inside": 0, "explained": 0,
                        "outside": 1, "uncompared": 0}}})
    assert "Boavizta 9 <span class=\"bad\">OUTSIDE</span>" in page
    assert "LLMCarbon 0.5 <b>excluded</b>" in page and "LLMCarbon 0.5 excluded: die &lt;only&gt;" in page


@pytest.fixture(scope="module")
def document() -> str:
    """The whole methodology document as text: the method part, then the tables."""
    page = environment().get_template("methodology.html").render(
        created="2000-01-01T00:00:00Z", version="0" * 64, version_short="0" * 16,
        methodology=methodology_context(None), method=method_context())
    return " ".join(text_of(html.unescape(page)).split())


def test_the_method_comes_first_with_each_formula_and_its_assumptions(document):
    """Each estimation method is stated with its formula and every assumption it rests on (id,
    value, unit, low, high, source), before the tables; ranges and scopes are explained once."""
    assert document.index("How the figures are made") < document.index("Reference data and assumptions")
    rows = {f"assumptions:{r['assumption_id']}": r for r in read_rows("assumptions")}
    for m in METHODS:
        assert m["title"] in document and " ".join(m["formula"].split()) in document, m["key"]
        for a in m["assumptions"]:
            r = rows[f"assumptions:{a}"]
            line = f"{a} {figure(r['value'])} {r['unit']} {figure(r['low'])} – {figure(r['high'])} {r['source']}"
            assert line in document, line
    assert " ".join(RANGE_MEANING.split()) in document and " ".join(SCOPE_RULE.split()) in document
    assert "test window" in document and "Allocation to teams" in document and "Reconstructing a published disclosure" in document


def test_the_document_names_nothing_a_reader_cannot_look_up(document):
    """No code or file paths, issue numbers or table names of the warehouse: an auditor reads the
    method, the reference data and its sources, nothing internal."""
    # (a public source cited by its repository and file, e.g. a peer tool's constants.py, is a citation)
    assert not re.findall(r"\b(?:pipelines|reports|sources|schemas|core|templates|tests)/[\w/.-]+\.(?:py|sql|csv|html)\b"
                          r"|[\w-]+\.sql\b", document)
    assert not re.findall(r"\bissue \d+|\.\./", document, re.I)
    assert not [m for m in MARTS if "_" in m and re.search(rf"\b{m}\b", document)]   # "reconciliation" is a word too


def test_every_figure_goes_through_the_one_formatter():
    """Every number cell prints as the formatter does: no raw float text (25000, 3.30e+20,
    400.000), thousands separators and powers of ten where a reader expects them."""
    page = html.unescape(environment().get_template("methodology.html").render(
        created="2000-01-01T00:00:00Z", version="0" * 64, version_short="0" * 16,
        methodology=methodology_context(None), method=method_context()))
    cells = [" ".join(text_of(c).split()) for c in re.findall(r'<td class="num">(.*?)</td>', page, re.S)]
    assert len(cells) > 100
    shown = [n for c in cells for n in re.split(r" – | · | \(no spread\)", c) if n.strip()]
    assert not [n for n in shown if figure(value_of(n)) != n.strip()]


def test_the_location_method_states_the_grid_hierarchy_the_build_applies(document):
    """The method said only 'the zone's annual factor' and listed the world's average as the
    location-based fallback: a reader signing it took a zone without a row of its own for a world
    average, where the build (and a published location's reconstruction) takes its grid zone's or
    its country's first. The text names the levels in the build's order, the world's last."""
    from sources.reference_data import GRID_LEVELS
    levels = ["the zone's own row", "else its grid zone's own row", "else its country's", "else the world's"]
    at = [document.index(x) for x in levels]
    assert at == sorted(at) and list(GRID_LEVELS.values())[-1] == "else the world's"
    location = next(m for m in METHODS if m["key"] == "location")
    assert "grid_intensity_world_fallback" not in location["assumptions"]
    # the build's coalesce, in the same order (int_zone_factors: cloud region, grid zone, country, world)
    sql = (REFERENCE_DIR.parent.parent / "pipelines/sql/20_intermediate/int_zone_factors.sql").read_text(encoding="utf-8")
    assert "coalesce(i.value, ig.value, ic.value, w.value) as intensity_g_per_kwh" in sql and len(GRID_LEVELS) == 4
