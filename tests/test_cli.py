"""Every command explains itself with an example, and the README's commands exist."""
from __future__ import annotations

import re
import subprocess
import sys

import click
from click.testing import CliRunner

from pipelines.cli import main
from tests.conftest import DATA, ROOT


def commands(group: click.Group, prefix: tuple[str, ...] = ()):
    # through click's own lookup: some subcommands are imported only when asked for (LazyGroup)
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
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


def test_a_build_says_which_model_runs_and_keeps_each_models_time(tmp_path, capsys, monkeypatch):
    """A build of a large month takes minutes (on Spark, hours): every TICK_S seconds a line on
    stderr names the model running; the seconds of every model are kept."""
    import pipelines.progress
    from pipelines.config import Config
    from pipelines.ingest import ingest
    from pipelines.progress import BuildProgress
    from pipelines.stages import run_stages, stages
    from pipelines.warehouse import connect
    monkeypatch.setattr(pipelines.progress, "TICK_S", 0.01)
    con = connect(tmp_path / "wh.duckdb")
    ingest(con, [DATA / "focus" / "focus_1.2_minimal.csv"])
    progress = BuildProgress()
    run_stages(con, Config(), progress)
    out, err = capsys.readouterr()
    assert out == "" and re.search(r"build working \d+ s: \d+ of \d+ models done; running \w+", err)
    assert sorted(progress.seconds) == sorted(m.name for m in stages()) and progress.total == len(stages())


def test_a_build_out_of_memory_is_one_error_line_naming_the_limit(tmp_path):
    """DuckDB spills, but some of a build must fit in its memory limit: past it, one Error: line
    says which model, the limit and how to raise it (not a DuckDB traceback)."""
    import os
    import subprocess
    import sys
    wh = tmp_path / "wh.duckdb"
    assert CliRunner().invoke(main, ["ingest", str(DATA / "focus" / "focus_1.2_minimal.csv"), "--warehouse", str(wh)]).exit_code == 0
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "build", "--warehouse", str(wh)], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "MB_MEMORY_LIMIT": "8MB"})
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("build working")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert re.fullmatch(r"Error: .*wh\.duckdb: building \w+ needs more memory than DuckDB may use \(MB_MEMORY_LIMIT 8MB\)\. "
                        r"Raise it for this run, e\.g\. MB_MEMORY_LIMIT=4GB .*", lines[0]), lines[0]


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


def test_ingest_starts_without_the_reconstruction_engine():
    """`meterbook ingest` paid for SciPy (half a second of imports) because the CLI imported
    `reconstruct` at start-up; it is now imported when that command is asked for."""
    code = ("import sys, pipelines.cli; from click.testing import CliRunner; "
            "CliRunner().invoke(pipelines.cli.main, ['ingest', '--help']); "
            "print(sorted(m for m in ('scipy', 'pandas', 'pipelines.reconstruct') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
