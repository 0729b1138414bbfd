"""Outputs are replaced whole or not at all: a run killed (SIGKILL, no cleanup) at any step of
writing leaves the folder with the complete earlier set or the complete new one, never the
statements of one warehouse state beside the report of another, never a truncated PDF."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader

from core.atomic import replace_file, replacing_set, write_text
from tests.fault_helpers import meterbook, run_child

# a set written by a child process: <out>/report.txt naming the state, and one file per team
WRITE_SET = """
import sys
from pathlib import Path
from core.atomic import replacing_set, write_text
out, state, teams = Path(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
with replacing_set(out, "pack", ("report.txt", "teams")) as stage:
    write_text(stage / "report.txt", state + ":" + ",".join(teams))
    for t in teams:
        write_text(stage / "teams" / f"{t}.txt", state)
"""


def visible_set(out: Path) -> tuple[str, ...] | None:
    """(state, team files...) as a reader of the folder sees it, or None when nothing is there;
    fails when what is there is not one state's complete set."""
    report = out / "report.txt"
    if not report.exists():
        assert not any((out / "teams").glob("*.txt")), "statements without their report"
        return None
    state, teams = report.read_text().split(":")
    files = sorted(p.stem for p in (out / "teams").glob("*.txt"))
    assert files == sorted(teams.split(",")), f"statements {files} beside the report of {state}:{teams}"
    assert {(out / "teams" / f"{t}.txt").read_text() for t in files} == {state}
    return (state, *files)


def fault_points(out: Path, tmp: Path, state: str, teams: str) -> int:
    counter = tmp / "count"
    counter.unlink(missing_ok=True)
    run_child([sys.executable, "-c", WRITE_SET, str(out), state, teams], f"count:0:{counter}")
    return counter.stat().st_size


def legacy_folder(out: Path) -> None:
    """A folder as runs wrote it before sets were published as links: plain files."""
    (out / "teams").mkdir(parents=True)
    (out / "report.txt").write_text("old:a,b")
    for t in "ab":
        (out / "teams" / f"{t}.txt").write_text("old")


@pytest.mark.parametrize("start", ["empty", "earlier run", "plain files"])
def test_a_kill_at_any_step_leaves_the_old_set_or_the_new(tmp_path, start):
    """Every fault point of a run that replaces a set of 2 statements by one of 3 other teams."""
    def prepare(out: Path) -> tuple[str, ...] | None:
        if start == "earlier run":
            run_child([sys.executable, "-c", WRITE_SET, str(out), "old", "a,b"], None)
        elif start == "plain files":
            legacy_folder(out)
        return visible_set(out)

    prepare(tmp_path / "count-run")
    n_points = fault_points(tmp_path / "count-run", tmp_path, "new", "c,d,e")
    assert n_points >= 8
    new = ("new", "c", "d", "e")
    seen = set()
    for n in range(1, n_points + 1):
        out = tmp_path / f"kill-{n}"
        old = prepare(out)
        proc = run_child([sys.executable, "-c", WRITE_SET, str(out), "new", "c,d,e"], f"kill:{n}:{tmp_path / f'c{n}'}")
        assert proc.returncode == -9, proc.stderr
        got = visible_set(out)
        assert got in (old, new), f"killed at point {n}: {got}"
        seen.add(got)
        # and the next run completes, whatever the kill left behind
        run_child([sys.executable, "-c", WRITE_SET, str(out), "next", "f"], None)
        assert visible_set(out) == ("next", "f")
        assert {p.name for p in (out / ".pack").iterdir()} == {"current", os.readlink(out / ".pack" / "current")}
    assert new in seen and (start == "empty" or len(seen) == 2)


def test_a_rerun_removes_statements_of_the_earlier_state(tmp_path):
    out = tmp_path / "out"
    for state, teams in (("first", ["platform", "research"]), ("second", ["search"])):
        with replacing_set(out, "pack", ("report.txt", "teams")) as stage:
            write_text(stage / "report.txt", f"{state}:{','.join(teams)}")
            for t in teams:
                write_text(stage / "teams" / f"{t}.txt", state)
    assert visible_set(out) == ("second", "search")


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = write_text(tmp_path / "report.csv", "old\n")

    def fail(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(28, "No space left on device", str(tmp))
    with pytest.raises(OSError):
        replace_file(path, fail)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.csv"]


def test_a_failed_run_keeps_the_earlier_set(tmp_path):
    out = tmp_path / "out"
    with replacing_set(out, "pack", ("report.txt", "teams")) as stage:
        write_text(stage / "report.txt", "old:a")
        write_text(stage / "teams" / "a.txt", "old")
    with pytest.raises(OSError), replacing_set(out, "pack", ("report.txt", "teams")) as stage:
        write_text(stage / "report.txt", "new:b")
        raise OSError(28, "No space left on device")
    assert visible_set(out) == ("old", "a")
    assert len(list((out / ".pack").iterdir())) == 2


# --- the real command: chargeback --per-team killed after its n-th write --------------------
def chargeback(wh: Path, config: Path, out: Path, fault: str | None) -> subprocess.CompletedProcess:
    return meterbook("report", "chargeback", "--month", "2026-10", "--per-team", "--warehouse", wh, "--config", config,
                     "--out", out, fault=fault)


def pdf_set(out: Path) -> tuple[str, ...] | None:
    """The chargeback set a reader sees: every PDF parses, and the statements are those of the
    report's teams (by the report's CSV); None when nothing is there."""
    if not (out / "chargeback.pdf").exists():
        assert not any((out / "teams").glob("*.pdf"))
        return None
    for pdf in [out / "chargeback.pdf", *(out / "teams").glob("*.pdf")]:
        assert len(PdfReader(pdf).pages) > 0
    teams = sorted({line.split(",")[1] for line in (out / "chargeback.csv").read_text().splitlines()[1:]})
    statements = sorted(p.name.rsplit("-", 1)[0] for p in (out / "teams").glob("*.pdf"))
    assert statements == teams, f"statements {statements} beside a report of {teams}"
    return tuple(teams)


def test_chargeback_killed_after_its_nth_write_leaves_a_complete_set(demo_billing, tmp_path):
    """A report of the demo month, then a run where a namespace is another team's: killed at its
    first write, among the statements and at the last step of publishing, the folder holds one
    state's complete set (the statements are the report's teams, every PDF parses)."""
    wh, config = demo_billing / "wh.duckdb", demo_billing / "demo" / "meterbook.toml"
    mine = tmp_path / "wh.duckdb"
    shutil.copy(wh, mine)
    other = tmp_path / "other.toml"
    other.write_text(config.read_text().replace('"search-serving" = "search"', '"search-serving" = "ranking"'))
    base, counter = tmp_path / "base", tmp_path / "count"
    assert chargeback(mine, config, base, f"count:0:{counter}").returncode == 0
    old, total = pdf_set(base), counter.stat().st_size   # a run into a folder with a set has more points
    seen = set()
    for n in (1, total // 2, total):
        out = tmp_path / f"kill-{n}"
        shutil.copytree(base, out, symlinks=True)
        proc = chargeback(mine, other, out, f"kill:{n}:{tmp_path / f'c{n}'}")
        assert proc.returncode == -9, proc.stderr[-2000:]
        got = pdf_set(out)
        assert got is not None and (got == old or "ranking" in got), f"killed at write {n} of {total}: {got}"
        seen.add(got)
    assert len(seen) == 2, "the kills fell all before or all after publishing: pick other points"
