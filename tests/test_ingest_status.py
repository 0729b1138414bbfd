"""What an ingest says it did, and that what it stores is what it read.

Every file of a run is committed whole (`loaded`, `unchanged`), `failed` with its one-line
Error, or `not tried` (an earlier file failed and the run stopped; --keep-going tries it), on
stderr as the run goes and in the --json on stdout; exit code 1 if any failed. A file edited
while it is read is refused before its commit, so that no sha256 stands for rows of another
version (every later ingest would call it `unchanged`). A failed ingest into a warehouse that
did not exist leaves no file behind.
"""
from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

import pipelines.ingest as runner
from core.errors import InputError
from pipelines.cli import main
from pipelines.warehouse import connect
from sources import REGISTRY
from tests.conftest import DATA
from tests.telemetry_fixtures import rows_of
from tests.test_telemetry_batch import write
from tests.wh_state import snapshot

FOCUS = DATA / "focus" / "focus_1.2_minimal.csv"
BROKEN = DATA / "bad" / "focus_missing_chargecategory.csv"
THIRD = DATA / "aws_cur2" / "cur2_gpu_instances_map_columns.csv"     # another delivery: never replaces the first
BROKEN_ERROR = f"{BROKEN}: missing required column ChargeCategory (header)"


def cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, ["ingest", *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res.exit_code, res.stdout, res.stderr


def stored(wh: Path) -> list[str]:
    with connect(wh, read_only=True) as con:
        return [r[0] for r in con.execute("select path from source_files where status = 'loaded' order by file_id").fetchall()]


def test_a_run_that_stops_on_its_second_file_says_what_became_of_each(tmp_path):
    wh = tmp_path / "wh.duckdb"
    code, out, err = cli(str(FOCUS), str(BROKEN), str(THIRD), "--warehouse", str(wh))
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith(f"[1/3] loaded    focus      3 rows  {FOCUS}")
    assert lines[1].startswith(f"Error: {BROKEN_ERROR}")
    assert lines[2] == f"[3/3] not tried  {THIRD}" and len(lines) == 3
    assert out == f"3 files: 1 loaded, 0 unchanged, 1 failed, 1 not tried; warehouse {wh}\n"
    assert stored(wh) == [str(FOCUS.resolve())]


def test_the_json_of_a_stopped_run_holds_every_files_status(tmp_path):
    wh = tmp_path / "wh.duckdb"
    code, out, err = cli(str(FOCUS), str(BROKEN), str(THIRD), "--warehouse", str(wh), "--json")
    assert code == 1 and err.startswith(f"Error: {BROKEN_ERROR}") and len(err.splitlines()) == 1
    files = json.loads(out)["files"]
    assert [(f["path"], f["status"]) for f in files] == [(str(FOCUS), "loaded"), (str(BROKEN), "failed"), (str(THIRD), "not tried")]
    assert files[0]["rows_loaded"] == 3 and files[0]["error"] is None
    assert files[1]["error"].startswith(BROKEN_ERROR) and files[2]["error"] is None
    assert files[1].keys() == files[0].keys() == files[2].keys()
    assert files[1]["rows_loaded"] is None and files[1]["sha256"] is None


def test_keep_going_commits_the_files_after_a_failure(tmp_path):
    wh = tmp_path / "wh.duckdb"
    code, out, err = cli(str(FOCUS), str(BROKEN), str(THIRD), "--warehouse", str(wh), "--json", "--keep-going")
    assert code == 1 and err.startswith(f"Error: {BROKEN_ERROR}")
    assert [f["status"] for f in json.loads(out)["files"]] == ["loaded", "failed", "loaded"]
    assert stored(wh) == [str(FOCUS.resolve()), str(THIRD.resolve())]


def test_a_batch_that_meets_a_broken_file_reports_each_file(tmp_path, monkeypatch):
    """Small telemetry files are staged as a batch; one that cannot be read sends the batch back
    to file by file, so the statuses stay per file (the one before it loaded, the rest not tried)."""
    folder = write(tmp_path / "dumps", [[(0, 0), (1, 1)], [(2, 3)], [(3, 4)], [(0, 5)]])
    (folder / "host-001.prom").write_text('DCGM_FI_DEV_POWER_USAGE{a="}}}}"} 1 1791244800000\n')
    with connect(tmp_path / "wh.duckdb") as con:
        outcomes = runner.ingest_each(con, [folder])
        kept_going = runner.ingest_each(con, [folder], keep_going=True)
    assert [(Path(o.path).name, o.status) for o in outcomes] == [
        ("host-000.prom", "loaded"), ("host-001.prom", "failed"), ("host-002.prom", "not tried"), ("host-003.prom", "not tried")]
    assert [o.status for o in kept_going] == ["unchanged", "failed", "loaded", "loaded"]


def test_a_single_failed_file_is_one_error_line(tmp_path):
    """A run of one file says its failure in its Error line alone (stdout: the count)."""
    wh = tmp_path / "wh.duckdb"
    code, out, err = cli(str(BROKEN), "--warehouse", str(wh))
    assert code == 1 and err.splitlines() == [err.strip()] and err.startswith(f"Error: {BROKEN_ERROR}")
    assert out == f"1 files: 0 loaded, 0 unchanged, 1 failed; warehouse {wh} not created\n"


@pytest.mark.parametrize("args", [["--kind", "dcgm-prom", str(FOCUS)], [str(FOCUS), str(BROKEN)][::-1], [str(BROKEN)]],
                         ids=["wrong kind", "first file broken", "broken"])
def test_a_failed_ingest_into_a_new_warehouse_leaves_no_file(tmp_path, args):
    wh = tmp_path / "new" / "deeper" / "wh.duckdb"
    code, _, err = cli(*args, "--warehouse", str(wh))
    assert code == 1 and err.startswith("Error: ")
    assert list(tmp_path.iterdir()) == []      # nor the folders made for it


def test_a_failed_ingest_into_an_existing_warehouse_keeps_it(tmp_path):
    wh = tmp_path / "wh.duckdb"
    assert cli(str(FOCUS), "--warehouse", str(wh))[0] == 0
    before = snapshot(wh)
    assert cli(str(BROKEN), "--warehouse", str(wh))[0] == 1
    assert snapshot(wh) == before


def edit_after_staging(monkeypatch, stage_owner: Any, stage_name: str, path: Path, edit: Callable[[Path], None]) -> None:
    """Make the scan thread read `path` only after DuckDB staged it, and edit it in between: the
    rows are of the file as it was, its sha256 and record count of the edited file."""
    staged = threading.Event()
    real_stage, real_scan = getattr(stage_owner, stage_name), runner.scan

    def stage(*args: Any, **kwargs: Any) -> Any:
        try:
            return real_stage(*args, **kwargs)
        finally:
            staged.set()

    def scan(*args: Any, **kwargs: Any) -> Any:
        if staged.wait(30) and not getattr(scan, "done", False):
            scan.done = True    # type: ignore[attr-defined]
            edit(path)
        return real_scan(*args, **kwargs)

    monkeypatch.setattr(stage_owner, stage_name, stage)
    monkeypatch.setattr(runner, "scan", scan)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def restate(path: Path) -> None:
    """The first charge's cost restated, the file's size kept: only its modification time says."""
    text = path.read_text()
    path.write_text(text.replace("98.32,111122223333", "90.00,111122223333", 1))
    assert len(path.read_text()) == len(text)


@pytest.mark.parametrize("loaded_before", [False, True], ids=["new path", "path loaded before"])
def test_a_file_edited_while_it_is_read_is_refused_and_changes_nothing(tmp_path, monkeypatch, loaded_before):
    wh, path = tmp_path / "wh.duckdb", tmp_path / "focus-2026-10.csv"
    path.write_bytes(FOCUS.read_bytes())
    if loaded_before:       # a path already loaded is hashed first, then staged
        assert cli(str(path), "--warehouse", str(wh))[0] == 0
        path.write_text(path.read_text().replace("-5.00,111122223333", "-6.00,111122223333", 1))
    cli(str(THIRD), "--warehouse", str(wh))
    before = snapshot(wh)
    edit_after_staging(monkeypatch, REGISTRY["focus"], "stage", path, restate)
    with connect(wh) as con, pytest.raises(InputError, match=r"changed while being read \(modified: its modification time moved\)\. "
                                                               r"Ingest it again$"):
        runner.ingest(con, [path])
    assert snapshot(wh) == before
    monkeypatch.undo()
    # the next ingest loads the file as it is now: never `unchanged` for content not loaded
    code, out, _ = cli(str(path), "--warehouse", str(wh), "--json")
    (f,) = json.loads(out)["files"]
    assert code == 0 and f["status"] == "loaded" and f["sha256"] == sha256(path)
    assert f["totals"]["billed_cost"] == pytest.approx(90.00 + 1.006 - (6.00 if loaded_before else 5.00))


def test_a_file_edited_while_its_batch_is_read_is_loaded_as_it_is_now(tmp_path, monkeypatch):
    """A batch whose file changed under it (its record count kept) goes back to file by file,
    which reads it again whole: the warehouse holds what a clean load of the files holds now."""
    folder = write(tmp_path / "dumps", [[(0, 0), (1, 1)], [(2, 3)], [(3, 4)]])
    other = write(tmp_path / "other", [[(2, 5)]]) / "host-000.prom"
    edit_after_staging(monkeypatch, REGISTRY["dcgm-prom"], "stage_batch", folder / "host-001.prom",
                       lambda p: p.write_bytes(other.read_bytes()))
    wh = tmp_path / "wh.duckdb"
    with connect(wh) as con:
        results = runner.ingest(con, [folder])
    assert [r.status for r in results] == ["loaded"] * 3
    monkeypatch.undo()
    with connect(tmp_path / "clean.duckdb") as con:
        runner.ingest(con, [folder])
    assert parts_by_sha256(wh) == parts_by_sha256(tmp_path / "clean.duckdb")


def parts_by_sha256(wh: Path) -> list[tuple]:
    """The GPU-hour parts under their file's sha256: rows and identity together."""
    with connect(wh, read_only=True) as con:
        return rows_of(con, "select s.sha256, t.* exclude (file_id) from gpu_hour_parts t join source_files s using (file_id)")
