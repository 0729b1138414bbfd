"""Fuzz and faults on the report side: any team names, tag keys and values (markup, formula
starters, bidi overrides, zero-width and control characters, '$', '_') go through ingest, build,
the chargeback and audit contexts, every export and the rendered reports without a traceback;
teams are named without invisible characters, each statement names its own team only, and the
CSVs a spreadsheet opens carry no formula."""
from __future__ import annotations

import csv
import io
import json
import unicodedata
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pypdf import PdfReader

from core.csv_out import FORMULA_START
from pipelines.cli import main
from reports.chargeback import statement_file
from tests.fault_helpers import meterbook

DATA = Path(__file__).parent / "data"
MONTH = "2026-10"
TEMPLATE = (DATA / "focus" / "focus_1.2_minimal.csv").read_text(encoding="utf-8").splitlines()
# what makes a name dangerous somewhere: markup, a spreadsheet formula, mathtext, a hidden legend
# entry, reordering, invisible, terminal escapes, compatibility forms, quotes and separators
NASTY = ["<b>", "=1+1", "+cmd", "-2", "@SUM(A1)", "\t", "$x$", "_infra", "\u202e", "\u200b", "\x1b[31m", "\u00ad",
         "ﬁ", "ｒ", '"', ",", ";", "\n", "é", "研究"]
NAMES = st.lists(st.sampled_from(NASTY) | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                                                   max_size=4), min_size=1, max_size=4).map("".join)
COSTS = st.decimals(min_value=Decimal("-500"), max_value=Decimal("5000"), places=2, allow_nan=False)


def focus_file(path: Path, lines: list[tuple[dict[str, str], Decimal]]) -> Path:
    """The minimal FOCUS 1.2 file's first line, once per (tags, cost): the real format, any tags."""
    head = next(csv.reader([TEMPLATE[0]]))
    row = dict(zip(head, next(csv.reader([TEMPLATE[1]]))))
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(head)
        for tags, cost in lines:
            w.writerow([{**row, "BilledCost": cost, "EffectiveCost": cost, "ListCost": cost, "Tags": json.dumps(tags)}[c]
                        for c in head])
    return path


def formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run as a formula: text (not a number) starting = + - @ tab CR."""
    def number(cell: str) -> bool:
        try:
            float(cell)
            return True
        except ValueError:
            return False
    return [c for row in csv.reader(io.StringIO(text)) for c in row if c.startswith(FORMULA_START) and not number(c)]


def hidden(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf")]


def invoke(*args: str | Path) -> str:
    res = CliRunner().invoke(main, list(map(str, args)))
    assert res.exit_code == 0 or (res.exit_code == 1 and res.stderr.startswith("Error: ")), \
        res.output + repr(res.exception)
    return res.stdout


def build(tmp: Path, lines: list[tuple[dict[str, str], Decimal]]) -> Path:
    wh = tmp / "wh.duckdb"
    invoke("ingest", focus_file(tmp / "focus-fuzz.csv", lines), "--warehouse", wh)
    invoke("build", "--warehouse", wh)
    return wh


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(teams=st.lists(NAMES, min_size=1, max_size=4), keys=st.lists(NAMES, max_size=2), costs=st.lists(COSTS, min_size=1, max_size=4))
def test_any_names_build_into_clean_distinct_teams_and_neutral_csv(tmp_path_factory, teams, keys, costs):
    from pipelines.config import load_config
    from reports.audit import build_audit_context
    from reports.chargeback import CSV_COLUMNS, build_context, report_html
    from reports.render import csv_text
    lines = [({"team": t, **{k: t for k in keys}}, c) for t, c in zip(teams * len(costs), costs)]
    wh = build(tmp_path_factory.mktemp("fuzz"), lines)
    with duckdb.connect(str(wh), read_only=True) as con:
        named = [r[0] for r in con.execute("select team from team_month where month = ?", [MONTH]).fetchall()]
    for team in named:
        assert not hidden(team) and team == team.strip(), repr(team)
    assert len({statement_file(t) for t in named}) == len(named)
    from pipelines.warehouse import connect
    con = connect(wh)
    try:
        ctx = build_context(con, load_config(None), MONTH)
        for part in ("front", "teams", "appendix"):
            assert report_html(ctx, part)
        build_audit_context(con, load_config(None), [], MONTH)
    finally:
        con.close()
    assert formula_cells(csv_text(ctx["teams"], CSV_COLUMNS + ctx["extra_columns"])) == []
    invoke("config", "check", "--warehouse", wh)


# One name of each kind, and two that print alike: the reports rendered, the statements read back.
ADVERSARIAL = ["=HYPERLINK(\"x\")", "<script>x</script>", "research", "research\u200b", "plat\u202emroftalp", "\x1b[2Jops",
               "_infra", "a$b$", "+sum", "-neg"]


@pytest.fixture(scope="module")
def adversarial(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("adversarial")
    wh = build(tmp, [({"team": t}, Decimal(10 + i)) for i, t in enumerate(ADVERSARIAL)])
    out = tmp / "out"
    runs = [meterbook("report", "chargeback", "--month", MONTH, "--per-team", "--warehouse", wh, "--out", out),
            meterbook("report", "audit", "--month", MONTH, "--warehouse", wh, "--out", out)]
    for kind in ("focus", "allocation"):
        runs.append(meterbook("export", kind, "--month", MONTH, "--warehouse", wh, "--out",
                              tmp / "exports" if kind == "allocation" else tmp / "exports" / f"focus-{MONTH}"))
    return {"wh": wh, "out": out, "exports": tmp / "exports", "runs": runs}


def test_every_report_and_export_runs_without_a_traceback(adversarial):
    for proc in adversarial["runs"]:
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]


def test_names_that_print_alike_are_one_team(adversarial):
    with duckdb.connect(str(adversarial["wh"]), read_only=True) as con:
        rows = dict(con.execute("select team, billed_cost from team_month where month = ?", [MONTH]).fetchall())
    assert rows["research"] == Decimal(12 + 13)     # research and research + U+200B
    assert "platmroftalp" in rows and not [t for t in rows if hidden(t)]


def test_each_statement_names_its_own_team_only(adversarial):
    statements = sorted((adversarial["out"] / "teams").glob("*.pdf"))
    with duckdb.connect(str(adversarial["wh"]), read_only=True) as con:
        teams = [r[0] for r in con.execute("select team from team_month where month = ?", [MONTH]).fetchall()]
    assert len(statements) == len(teams)
    for pdf in statements:
        rows = list(csv.DictReader(io.StringIO(PdfReader(pdf).attachments["statement.csv"][0].decode())))
        assert len(rows) == 1 and formula_cells(PdfReader(pdf).attachments["statement.csv"][0].decode()) == []
        assert pdf.name == statement_file(next(t for t in teams if rows[0]["team"] in (t, "'" + t)))
    for pdf in [adversarial["out"] / "chargeback.pdf", adversarial["out"] / "audit.pdf"]:
        assert len(PdfReader(pdf).pages) > 1
    assert formula_cells((adversarial["out"] / "chargeback.csv").read_text(encoding="utf-8")) == []
    assert formula_cells((adversarial["out"] / "audit.csv").read_text(encoding="utf-8")) == []


def test_exported_csvs_carry_no_formula(adversarial):
    for path in sorted(adversarial["exports"].glob("*.csv")):
        assert formula_cells(path.read_text(encoding="utf-8")) == [], path.name
