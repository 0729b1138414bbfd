"""Names that look alike are one name: a tag value with a zero-width space, a bidi override or a
terminal escape becomes a team without them (a finding keeps the raw value), and what the data
says reaches the terminal escaped."""
from __future__ import annotations

import unicodedata
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main

FIXTURE = Path(__file__).parent / "data" / "focus" / "focus_1.2_invisible_team_tags.csv"


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("names") / "wh.duckdb"
    for args in (["ingest", str(FIXTURE), "--warehouse", str(wh)], ["build", "--warehouse", str(wh)]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 0, res.output + repr(res.exception)
    return wh


def rows(wh: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_a_zero_width_space_makes_no_second_team(wh):
    teams = dict(rows(wh, "select team, billed_cost from team_month"))
    assert teams["research"] == Decimal("108.32")      # 98.32 tagged research, 10.00 research + U+200B
    assert "platformmroftalp" in teams and "[31mvision" in teams
    assert not [t for t in teams if any(unicodedata.category(c) in ("Cc", "Cf") for c in t)]


def test_the_finding_names_the_raw_value(wh):
    found = rows(wh, "select rows, first_row, example from findings where finding = 'invisible_in_tag'")
    assert found == [(3, 2, "research\u200b")]   # rows 2-4; row 5 has the escape in its key


def test_config_check_prints_the_datas_control_characters_escaped(wh):
    res = CliRunner().invoke(main, ["config", "check", "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.stdout and "\u202e" not in res.stdout
    assert "\\x1b[2Jowner" in res.stdout         # the tag key no mapping reaches, written out
