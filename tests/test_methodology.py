"""The methodology appendix is generated from sources/reference and agrees with it (like cog --check)."""
from __future__ import annotations

import csv
import html
import re

import duckdb
import pytest

from reports.methodology import methodology_context
from reports.render import environment
from sources.reference_data import REFERENCE_DIR, load_reference, read_rows

NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@pytest.fixture(scope="module")
def rendered() -> str:
    page = environment().get_template("partials/methodology.html").render(methodology=methodology_context(None))
    return html.unescape(page)


def text_of(page: str) -> str:
    return re.sub(r"<[^>]+>", " ", re.sub(r"\{#.*?#\}", " ", page, flags=re.S))


def test_every_assumption_and_every_file_appears(rendered):
    for r in read_rows("assumptions"):
        assert f">{r['assumption_id']}<" in rendered, r["assumption_id"]
        assert r["value"] in rendered and r["notes"] in rendered
    for p in REFERENCE_DIR.glob("*.csv"):
        assert f"sources/reference/{p.name}" in rendered, p.name


def test_every_number_printed_comes_from_the_reference_files(rendered):
    """A number in the appendix is a cell of a reference CSV (or the README sentence printed
    beside it), or a row count computed from the CSVs; nothing is typed by hand."""
    allowed = set()
    for p in [*REFERENCE_DIR.glob("*.csv"), REFERENCE_DIR / "README.md"]:
        allowed |= set(NUMBER.findall(p.read_text(encoding="utf-8")))
    ctx = methodology_context(None)
    counts = {str(f["rows"]) for f in ctx["files"]} | {str(s["rows"]) for f in ctx["files"] for s in f["sources"]}
    counts |= {str(v) for v in ctx["peers"]["summary"].values() if isinstance(v, int)}
    counts |= {str(g["count"]) for g in ctx["peers"]["uncompared"]}
    printed = NUMBER.findall(text_of(rendered))
    assert printed, "the partial printed no numbers at all"
    stray = sorted({n for n in printed if n not in allowed | counts})
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
            assert f"{p['peer']} {p['value']}" in rendered, (r["coefficient_id"], p["peer"])
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
