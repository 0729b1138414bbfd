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


def built(folder: Path, fixture: Path) -> Path:
    wh = folder / "wh.duckdb"
    for args in (["ingest", str(fixture), "--warehouse", str(wh)], ["build", "--warehouse", str(wh)]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 0, res.output + repr(res.exception)
    return wh


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return built(tmp_path_factory.mktemp("names"), FIXTURE)


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


COMPAT = Path(__file__).parent / "data" / "focus" / "focus_1.2_compatibility_team_tags.csv"


@pytest.fixture(scope="module")
def compat_wh(tmp_path_factory) -> Path:
    return built(tmp_path_factory.mktemp("compat"), COMPAT)


def test_spellings_alike_under_nfkc_are_one_team(compat_wh):
    # fullwidth letters, the fi ligature and a trailing zero-width space fold into the ASCII team;
    # an ideographic space alone names nobody: the line stays unallocated, never a blank-looking team
    from pipelines.config import Config
    teams = dict(rows(compat_wh, "select team, billed_cost from team_month"))
    assert teams == {"research": Decimal("108.32"), "finance": Decimal("25.00"), Config.unallocated: Decimal("7.00")}
    sources = dict(rows(compat_wh, "select row_number, team_source from int_charges_teams where team = 'finance'"))
    assert set(sources.values()) == {"tag:team"}


def test_the_folded_tag_finding_names_the_first_raw_value(compat_wh):
    found = rows(compat_wh, "select rows, first_row, example from findings where finding = 'invisible_in_tag'")
    assert found == [(4, 2, "ｒｅｓｅａｒｃｈ")]     # data rows 2-5; row 1 is plain ASCII


def test_team_names_typed_in_the_config_fold_like_tag_values(tmp_path):
    from core.errors import InputError
    from pipelines.config import load_config
    toml = tmp_path / "meterbook.toml"
    toml.write_text('[teams.namespaces]\nml-train = "ｒｅｓｅａｒｃｈ"\n[teams.accounts]\n"1111" = "ﬁnance\u200b"\n'
                    '[[teams.rules]]\nfield = "service"\npattern = "^Amazon"\nteam = " ops "\n', encoding="utf-8")
    config = load_config(toml)
    assert config.namespace_teams == {"ml-train": "research"} and config.account_teams == {"1111": "finance"}
    assert config.team_rules[0].team == "ops"
    toml.write_text('[teams.namespaces]\nml-train = "\u200b"\n', encoding="utf-8")
    with pytest.raises(InputError, match="no visible character"):
        load_config(toml)
