"""A team's statement holds one team: its own share of every shared amount and finding, no other
team's name, resource, host or input file, in its text, its attachments or its provenance."""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import duckdb
import pytest
from pypdf import PdfReader

from reports.chargeback import findings, statement_findings
from tests.pdf_helpers import text

MONTH = "2026-10"


def _rows(wh: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute(sql, [MONTH]).fetchall()


@pytest.fixture(scope="module")
def owned(chargeback_demo) -> dict:
    """Per team: its statement (read back) and what only it owns (names, resources, hosts, files)."""
    wh, out = chargeback_demo["wh"], chargeback_demo["out"]
    teams = [t for (t,) in _rows(wh, "select team from team_month where month = ?")]
    marks: dict[str, set[str]] = {t: {t} for t in teams}
    for team, resource in _rows(wh, "select team, resource_id from team_resource_month where month = ? and resource_id is not null"):
        marks[team].add(resource)
    for team, host in _rows(wh, "select team, host from host_workload_month where month = ?"):
        marks[team].add(host)
    for team, path in _rows(wh, """select a.team, f.path from (select distinct team, source_sha256 from allocation_day
                                   where month = ?) a join source_files f on f.sha256 = a.source_sha256"""):
        marks[team].add(Path(path).name)
    statements = {}
    for pdf in (out / "teams").glob("*.pdf"):
        reader = PdfReader(pdf)
        files = {name: data[0].decode("utf-8") for name, data in reader.attachments.items()}
        team = next(csv.DictReader(io.StringIO(files["statement.csv"])))["team"].lstrip("'")
        statements[team] = {"pdf": pdf, "text": text(pdf), "files": files, "title": reader.metadata.title}
    return {"marks": marks, "statements": statements, "teams": teams}


def _named(mark: str, body: str) -> bool:
    """`mark` as a word of `body` ('search' is not named by 'research')."""
    return re.search(rf"(?<![\w.-]){re.escape(mark)}(?![\w-])", body) is not None


def test_no_statement_names_another_teams_name_resource_host_or_file(owned):
    assert set(owned["statements"]) == set(owned["teams"])
    problems = []
    for team, st in owned["statements"].items():
        theirs = set().union(*(m for t, m in owned["marks"].items() if t != team)) - owned["marks"][team]
        for where, body in [("text", st["text"]), *st["files"].items()]:
            # text extraction breaks long ids across lines: compare without line breaks too
            flat = body.replace("\n", "")
            problems += [(team, where, m) for m in sorted(theirs) if _named(m, body) or (len(m) > 12 and m in flat)]
    assert not problems


def test_statement_provenance_lists_only_its_files_by_name(owned):
    for team, st in owned["statements"].items():
        prov = json.loads(st["files"]["provenance.json"])
        assert prov["source_files"], team
        assert not [f for f in prov["source_files"] if "/" in f["file"] or f["file"] not in owned["marks"][team]]
        assert "/" not in (prov["config_path"] or "")
        assert "path" not in json.dumps(prov["source_files"])


def test_a_statement_names_the_scope_of_its_own_co2e(owned, chargeback_demo):
    """Each team with CO2e reads the GHG scope it falls in (its own scope_month rows): the demo's
    GPUs are rented AWS instances, a purchased service, Scope 3 category 1 for every team."""
    with_co2e = {t for (t,) in _rows(chargeback_demo["wh"], "select team from team_month where month = ? and co2e_kg > 0")}
    assert with_co2e
    for team in with_co2e:
        body = " ".join(owned["statements"][team]["text"].split())
        assert "GHG Protocol scope of this CO2e: cloud GPUs, electricity Scope 3, category 1 and embodied Scope 3, " \
               "category 1." in body, team


def test_statements_are_titled_with_their_team(owned):
    for team, st in owned["statements"].items():
        assert st["title"] == f"GPU chargeback {MONTH} — {team}"


FOUND = [
    {"finding": "spot_candidate", "subject": "i-1", "resource_id": "i-1", "team": "platform", "unit": "preemptions/h",
     "value": 3.0, "cost_usd": 1000.0, "energy_kwh": None, "detail": "d", "paying_team": "research",
     "paying_teams": [{"team": "research", "share": 0.75}, {"team": "search", "share": 0.25}]},
    {"finding": "idle_gpu_hours", "subject": "i-1", "resource_id": "i-1", "team": None, "unit": "h", "value": 48.0,
     "cost_usd": 200.0, "energy_kwh": None, "detail": "d", "paying_team": "research",
     "paying_teams": [{"team": "research", "share": 0.75}, {"team": "search", "share": 0.25}]},
    # findings_ranked names a GPU's payers, not its node's
    {"finding": "low_utilization", "subject": "host-1/GPU-a", "resource_id": "i-1", "team": "search", "unit": "h",
     "value": 48.0, "cost_usd": 100.0, "energy_kwh": None, "detail": "d", "paying_team": "search",
     "paying_teams": [{"team": "search", "share": 1.0}]},
    # a time-sliced GPU two teams' pods held
    {"finding": "telemetry_gap", "subject": "host-1/GPU-b", "resource_id": "i-1", "team": None, "unit": "h",
     "value": 10.0, "cost_usd": None, "energy_kwh": 5.0, "detail": "d", "paying_team": "search",
     "paying_teams": [{"team": "search", "share": 0.6}, {"team": "research", "share": 0.4}]},
]


def test_a_shared_resources_findings_are_each_payers_share():
    search = {f["finding"]: f for f in statement_findings(FOUND, "search")}
    research = {f["finding"]: f for f in statement_findings(FOUND, "research")}
    assert search["spot_candidate"]["cost_usd"] == 250.0 and research["spot_candidate"]["cost_usd"] == 750.0
    assert search["idle_gpu_hours"]["value"] == 12.0 and search["spot_candidate"]["value"] == 3.0
    # a GPU's finding is the teams' charged for the GPU's time, whoever pays for the host
    assert search["low_utilization"]["cost_usd"] == 100.0 and "low_utilization" not in research
    assert search["telemetry_gap"]["value"] == 6.0 and research["telemetry_gap"]["energy_kwh"] == 2.0
    assert all(f["paying_teams"] == [{"team": "search", "share": f["paying_teams"][0]["share"]}] for f in search.values())


def test_a_gpus_finding_names_the_same_payers_on_the_chargeback_and_the_statements(chargeback_demo):
    """A finding on a GPU is paid by the teams charged for that GPU's time, not by its node's: the
    demo's two low-utilization GPUs on ip-10-0-1-11 are held by search's pods (embed-batch) on a
    node research and search share. The chargeback's Findings named the node's payers (research
    71 % / search 29 %) while the search statement listed the whole amounts as search's."""
    wh, out = chargeback_demo["wh"], chargeback_demo["out"]
    with duckdb.connect(str(wh), read_only=True) as con:
        found = findings(con, MONTH)
    teams = [t for (t,) in _rows(wh, "select team from team_month where month = ?")]
    low = [f for f in found if f["finding"] == "low_utilization"]
    assert len(low) == 2 and all(f["subject"].startswith("ip-10-0-1-11/GPU-") for f in low)
    node = [f for f in found if f["finding"] == "idle_gpu_hours" and f["subject"] == low[0]["resource_id"]]
    assert {p["team"] for p in node[0]["paying_teams"]} == {"research", "search"}, "the GPUs' node should be shared"
    assert all(f["paying_team"] == "search" and f["paying_teams"] == [{"team": "search", "share": 1.0}] for f in low)
    # every finding: the statements that list it are its payers', at their shares of its money
    for f in found:
        mine = {t: g for t in teams for g in statement_findings([f], t)}
        named = {p["team"]: p["share"] for p in f["paying_teams"]} or {f["paying_team"]: 1.0}
        assert set(mine) == set(named) - {None}, (f["finding"], f["subject"], set(mine), named)
        for t, g in mine.items():
            assert g["cost_usd"] == (None if f["cost_usd"] is None else f["cost_usd"] * named[t] if named[t] < 1 else f["cost_usd"])
    # and the documents say so: the chargeback's Findings row and the statements
    board = text(out / "chargeback.pdf")
    statements = {}
    for pdf in (out / "teams").glob("*.pdf"):
        reader = PdfReader(pdf)
        team = next(csv.DictReader(io.StringIO(reader.attachments["statement.csv"][0].decode("utf-8"))))["team"].lstrip("'")
        statements[team] = text(pdf).replace("\n", "")
    for f in low:
        tail = f["subject"].rsplit("-", 1)[1]   # a long subject wraps in its cell
        at = board.index(tail)
        row = board[at:board.index("USD", at)]
        assert _named("search", row) and not _named("research", row) and "%" not in row, row
        assert tail in statements["search"] and f"USD {f['cost_usd']:,.2f}" in statements["search"]
        assert tail not in statements["research"]
