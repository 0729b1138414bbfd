"""The machine failing under a command (a full disk, a read-only or forbidden folder, a path
under a file) is one `Error: <path>: <what> (<errno>). <fix>` line, exit 1, no traceback, and
nothing half-written: the earlier outputs stay as they were."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from core.atomic import replacing_set, write_text
from pipelines.cli import main
from reports.chargeback import SET_MEMBERS
from tests.fault_helpers import meterbook

DATA = Path(__file__).parent / "data"
PROGRESS = re.compile(r"^(?!Error: ).* working \d+ s: ")
MONTH = "2026-10"


def said(stderr: str) -> list[str]:
    """stderr's lines less the progress lines ("build working 10 s: ...") a slow machine prints."""
    return [ln for ln in stderr.strip().splitlines() if not PROGRESS.match(ln)]


def one_error_line(proc, *words: str) -> str:
    # the error is the one line besides progress
    lines = said(proc.stderr)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def folder_bytes(out: Path) -> dict[str, bytes]:
    """Every file a reader of `out` sees (through the set's links), by path."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} | \
        {f"teams/{p.name}": p.read_bytes() for p in sorted((out / "teams").glob("*"))}


def leftovers(out: Path) -> list[str]:
    """Temporary files and stages a failed run left behind."""
    store = out / ".chargeback"
    keep = {"current", str(Path(store / "current").readlink())} if (store / "current").is_symlink() else set()
    stages = [p.name for p in store.iterdir() if p.name not in keep] if store.is_dir() else []
    return stages + [p.name for p in out.rglob("*") if ".tmp-" in p.name]


@pytest.fixture
def wh(demo_billing, tmp_path) -> Path:
    mine = tmp_path / "wh.duckdb"
    shutil.copy(demo_billing / "wh.duckdb", mine)
    return mine


@pytest.fixture
def earlier(tmp_path) -> Path:
    """A folder holding an earlier chargeback set (its content does not matter, only that it stays)."""
    out = tmp_path / "out"
    with replacing_set(out, "chargeback", SET_MEMBERS) as stage:
        write_text(stage / "chargeback.csv", "month,team\n2026-09,earlier\n")
        write_text(stage / "chargeback.pdf", "%PDF-1.7 earlier\n")
        write_text(stage / "teams" / "earlier-00000000.pdf", "%PDF-1.7 earlier team\n")
    return out


def test_ingest_past_the_file_size_limit_is_one_error_line(tmp_path):
    """A real write failure inside DuckDB (its WAL past RLIMIT_FSIZE): before, a traceback."""
    proc = meterbook("ingest", DATA / "focus" / "focus_1.2_minimal.csv", "--warehouse", tmp_path / "wh.duckdb",
                     file_size_limit=300_000)
    one_error_line(proc, "EFBIG", "wh.duckdb", "DuckDB")


def test_ingest_on_a_full_disk_checkpoint_is_one_error_line(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise duckdb.FatalException('FATAL Error: Failed to create checkpoint because of error: '
                                    f'Could not write file "{tmp_path / "wh.duckdb"}": No space left on device')
    monkeypatch.setattr("pipelines.ingest.ingest_each", full)
    res = CliRunner().invoke(main, ["ingest", str(DATA / "focus" / "focus_1.2_minimal.csv"), "--warehouse", str(tmp_path / "wh.duckdb")])
    assert res.exit_code == 1 and res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.stderr.startswith(f"Error: {tmp_path / 'wh.duckdb'}: no space left on the device (ENOSPC, DuckDB: FATAL Error")


def test_an_unknown_os_error_still_shows_its_traceback(tmp_path, monkeypatch):
    """Only the machine's failures are turned into a line: a bug stays visible."""
    def broken(*args, **kwargs):
        raise OSError(5, "Input/output error")   # EIO: not one the user can fix by freeing space
    monkeypatch.setattr("pipelines.ingest.ingest_each", broken)
    res = CliRunner().invoke(main, ["ingest", str(DATA / "focus" / "focus_1.2_minimal.csv"), "--warehouse", str(tmp_path / "wh.duckdb")])
    assert isinstance(res.exception, OSError)


@pytest.mark.parametrize("fault, errno_name", [("ENOSPC:1", "ENOSPC"), ("EDQUOT:3", "EDQUOT")])
def test_report_on_a_failing_disk_keeps_the_earlier_set(wh, demo_billing, earlier, tmp_path, fault, errno_name):
    """At the CSV (written first), at the first PDF written by a render process."""
    before = folder_bytes(earlier)
    proc = meterbook("report", "chargeback", "--month", MONTH, "--per-team", "--warehouse", wh,
                     "--config", demo_billing / "demo" / "meterbook.toml", "--out", earlier,
                     fault=f"{fault}:{tmp_path / 'count'}")
    line = one_error_line(proc, errno_name, str(earlier))
    assert ".chargeback" not in line and ".tmp-" not in line
    assert folder_bytes(earlier) == before
    assert leftovers(earlier) == []


def test_report_into_a_path_under_a_file_is_one_error_line(wh, demo_billing, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    proc = meterbook("report", "chargeback", "--month", MONTH, "--warehouse", wh, "--config", demo_billing / "demo" / "meterbook.toml",
                     "--out", tmp_path / "a-file" / "out")
    one_error_line(proc, "ENOTDIR", "a-file")


def test_a_first_report_that_fails_leaves_nothing(wh, demo_billing, tmp_path):
    out = tmp_path / "new"
    proc = meterbook("report", "chargeback", "--month", MONTH, "--warehouse", wh, "--config", demo_billing / "demo" / "meterbook.toml",
                     "--out", out,
                     fault=f"EACCES:1:{tmp_path / 'count'}")
    one_error_line(proc, "EACCES", "permission denied")
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("kind, fault", [("allocation", "ENOSPC:1"), ("focus", "EROFS:3")])
def test_export_on_a_failing_disk_keeps_the_earlier_export(wh, tmp_path, kind, fault):
    """At the Parquet file (written first), at the CSV."""
    out = tmp_path / "exports"
    args = ["export", kind, "--month", MONTH, "--warehouse", wh, "--out", out if kind == "allocation" else out / f"{kind}-{MONTH}"]
    assert meterbook(*args).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}
    proc = meterbook(*args, fault=f"{fault}:{tmp_path / 'count'}")
    one_error_line(proc, fault.split(":")[0], str(out))
    assert {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")} == before


def test_export_into_a_path_under_a_file_is_one_error_line(wh, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    proc = meterbook("export", "allocation", "--month", MONTH, "--warehouse", wh, "--out", tmp_path / "a-file" / "exports")
    one_error_line(proc, "ENOTDIR", "a-file")


def test_methodology_on_a_full_disk_is_one_error_line(tmp_path):
    proc = meterbook("report", "methodology", "--out", tmp_path, fault=f"ENOSPC:1:{tmp_path / 'count'}")
    one_error_line(proc, "ENOSPC", str(tmp_path / "methodology-"))
    assert [p.name for p in tmp_path.iterdir()] == ["count"]
