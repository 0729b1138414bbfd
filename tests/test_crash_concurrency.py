"""Crashes and a second writer. An ingest killed (SIGKILL, no cleanup) at any point leaves the
warehouse as it was before that file or as after it, never in between, and the next run
completes. A second meterbook on a warehouse in use exits with one `Error:` line (DuckDB holds
an exclusive file lock for a writer) and changes nothing; the first run finishes normally.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.ingest import ingest
from pipelines.warehouse import connect
from tests.conftest import DATA, ROOT, run_cli
from tests.wh_state import content

SMALL = DATA / "focus" / "focus_1.2_minimal.csv"
ROWS = 80_000            # ~26 MB, ~1.5 s of ingest on the 2-core CI machine (plus ~2 s start-up)
# Kill points as fractions of one uninterrupted run: during start-up and imports, opening the
# warehouse, reading and staging the file, and close to the commit.
KILL_AT = (0.35, 0.7, 0.95)


def write_big_focus(path: Path, rows: int) -> None:
    header, line = SMALL.read_text().splitlines()[:2]
    with open(path, "w") as fh:
        fh.write(header + "\n")
        for i in range(rows):
            day, hour = 1 + i % 28, i % 24
            fh.write(line.replace("i-0a5000000000002", f"i-{i:017x}")
                     .replace("2026-10-14T00:00:00Z,2026-10-14T01:00:00Z",
                              f"2026-10-{day:02d}T{hour:02d}:00:00Z,2026-10-{day:02d}T{hour:02d}:59:59Z") + "\n")


def ingest_proc(wh: Path, *paths: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipelines.cli", "ingest", *map(str, paths), "--warehouse", str(wh)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def copy_warehouse(src: Path, dst: Path) -> Path:
    for suffix in ("", ".wal"):
        if Path(str(src) + suffix).exists():
            shutil.copy(str(src) + suffix, str(dst) + suffix)
    return dst


def ingest_here(wh: Path, path: Path) -> None:
    """The follow-up run, in this process (no second start-up); it must simply complete."""
    con = connect(wh)
    try:
        (res,) = ingest(con, [path])
        assert res.rows_read == res.rows_loaded + res.rows_rejected
    finally:
        con.close()


def recovered_content(wh: Path) -> dict:
    """Open read-write once (DuckDB replays or discards the write-ahead log), then read."""
    duckdb.connect(str(wh)).close()
    return content(wh)


@pytest.fixture(scope="module")
def states(tmp_path_factory):
    """Warehouse `before` (one small file), the big file, `after` (its content with the big file
    loaded) and how long an uninterrupted ingest of the big file takes, start-up included."""
    root = tmp_path_factory.mktemp("crash")
    big = root / "focus-big-2026-10.csv"
    write_big_focus(big, ROWS)
    before = root / "before.duckdb"
    code, _, err = run_cli("ingest", str(SMALL), "--warehouse", str(before))
    assert code == 0, err
    after = copy_warehouse(before, root / "after.duckdb")
    t0 = time.monotonic()
    proc = ingest_proc(after, big)
    _, err = proc.communicate(timeout=300)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, err
    return {"root": root, "big": big, "before": before, "before_content": content(before),
            "after_content": content(after), "elapsed": elapsed}


def test_states_differ(states):
    # the big file is a restated delivery of the small file's account and month: it replaces it
    assert states["before_content"]["charges"][0][1] == 3
    assert states["after_content"]["charges"][0][1] == ROWS


@pytest.mark.parametrize("fraction", KILL_AT)
def test_sigkill_leaves_before_or_after_and_next_run_completes(states, fraction):
    wh = copy_warehouse(states["before"], states["root"] / f"kill-{fraction}.duckdb")
    proc = ingest_proc(wh, states["big"])
    time.sleep(states["elapsed"] * fraction)
    killed = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    got = recovered_content(wh)
    assert got in (states["before_content"], states["after_content"]), f"killed={killed} at {fraction}"
    print(f"kill at {fraction}: process running={killed}, left {'before' if got == states['before_content'] else 'after'}")
    # the next run completes, and ends exactly where one clean load ends
    ingest_here(wh, states["big"])
    assert content(wh) == states["after_content"]


def test_sigkill_while_replacing_a_file_keeps_old_or_new(states):
    """Replacing (same path, new content) deletes the old rows and inserts the new ones in one
    transaction: a kill in the middle must not leave the path with neither, or both."""
    root = states["root"]
    path = root / "replace" / "focus.csv"
    path.parent.mkdir()
    shutil.copy(SMALL, path)
    wh = root / "replace.duckdb"
    ingest_here(wh, path)
    old = content(wh)
    shutil.copy(states["big"], path)
    proc = ingest_proc(wh, path)
    time.sleep(states["elapsed"] * 0.8)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    got = recovered_content(wh)
    if got != old:                     # the replacement committed before the kill
        assert got["charges"][0][1] == ROWS
        assert len(got["files"]) == 1
    ingest_here(wh, path)
    final = content(wh)
    assert len(final["files"]) == 1 and final["charges"][0][1] == ROWS


def warehouse_lock_held(path: Path) -> bool:
    """Whether some process holds a write lock on the warehouse file. Asked with F_GETLK, which
    reports a conflicting lock without taking one, so the probe never races the writer."""
    flock = struct.pack("hh4xqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    with open(path, "rb") as fh:
        l_type = struct.unpack("hh4xqqi4x", fcntl.fcntl(fh.fileno(), fcntl.F_GETLK, flock))[0]
    return l_type != fcntl.F_UNLCK


def test_a_second_writer_gets_one_error_line_and_changes_nothing(states):
    """While one ingest holds the warehouse, a second meterbook on it exits with one Error: line
    and writes nothing; the first completes, and the refused run works when run again. The second
    starts once the first is seen holding the lock (a fixed sleep raced start-up under load)."""
    wh = copy_warehouse(states["before"], states["root"] / "busy.duckdb")
    other = states["root"] / "other" / "focus.csv"
    other.parent.mkdir()
    other.write_text(SMALL.read_text().replace("111122223333", "555566667777"))   # another account
    big = ingest_proc(wh, states["big"])
    deadline = time.monotonic() + 120
    while not warehouse_lock_held(wh):
        assert big.poll() is None, f"the first ingest ended before it was seen holding the lock: {big.communicate()}"
        assert time.monotonic() < deadline, "the first ingest never took the warehouse lock"
        time.sleep(0.005)
    refused = CliRunner().invoke(main, ["ingest", str(other), "--warehouse", str(wh)])
    _, big_err = big.communicate(timeout=300)
    assert big.returncode == 0, big_err
    assert refused.exit_code == 1 and "Traceback" not in refused.output, refused.output
    assert refused.stderr.strip() == (f"Error: {wh}: warehouse is in use by another meterbook process (file lock held). "
                                      "Wait for the other run to finish, then run this command again")
    alone = copy_warehouse(states["before"], states["root"] / "alone-big.duckdb")
    ingest_here(alone, states["big"])
    assert content(wh) == content(alone)          # the first run's result, nothing of the second
    ingest_here(wh, other)                         # and the refused run simply works when run again
