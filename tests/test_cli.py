"""Every command explains itself with an example, and the README's commands exist."""
from __future__ import annotations

import re

import click
from click.testing import CliRunner

from pipelines.cli import main
from tests.conftest import ROOT


def commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from commands(cmd, prefix + (name,))
        else:
            yield prefix + (name,)


def test_every_command_has_help_with_an_example():
    for path in commands(main):
        res = CliRunner().invoke(main, [*path, "--help"])
        assert res.exit_code == 0, path
        assert "Example:" in res.output, f"meterbook {' '.join(path)} --help has no example"


def test_readme_commands_are_real():
    readme = (ROOT / "README.md").read_text()
    known = {" ".join(p) for p in commands(main)}
    used = set(re.findall(r"^meterbook ((?:report |export |config )?[a-z]+)", readme, flags=re.M))
    assert used and used <= known, used - known
    makefile = (ROOT / "Makefile").read_text()
    for target in ("report", "test"):
        assert f"make {target}" in readme and re.search(rf"^{target}:", makefile, flags=re.M)


def test_long_ingest_says_it_is_working(tmp_path, capsys):
    """A month of CUR or telemetry takes minutes in one file: the ticker reports on stderr, with
    DuckDB's estimate of the running step, and never on stdout (which carries --json)."""
    from pipelines.ingest import ticker
    from pipelines.warehouse import connect
    con = connect(tmp_path / "wh.duckdb")
    with ticker(con, "[1/1]", tmp_path / "big.csv", every_s=0.05):
        con.execute("select count(*) from range(400000000) t(i) where hash(i) % 7 = 0").fetchall()
    out, err = capsys.readouterr()
    assert out == ""
    assert "[1/1] working" in err and "big.csv" in err
    assert "% done" in err
