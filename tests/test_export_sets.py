"""An export's Parquet and CSV are one set: a kill or a failing disk at any write leaves the
earlier pair or the new pair, never a Parquet of one warehouse state beside a CSV of another."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fault_helpers import meterbook

MONTH = "2026-10"
EARLIER = {f"focus-{MONTH}.parquet": b"earlier parquet", f"focus-{MONTH}.csv": b"earlier csv"}


@pytest.fixture
def wh(demo_billing, tmp_path) -> Path:
    mine = tmp_path / "wh.duckdb"
    shutil.copy(demo_billing / "wh.duckdb", mine)
    return mine


def export_args(wh: Path, out: Path) -> list[str | Path]:
    return ["export", "focus", "--month", MONTH, "--warehouse", wh, "--out", out / f"focus-{MONTH}"]


def pair(out: Path) -> dict[str, bytes]:
    """What a reader of the folder sees (through the set's links), hidden stages left out."""
    return {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}


def test_export_killed_at_its_writes_leaves_one_whole_pair(wh, tmp_path):
    def folder_with_earlier(name: str) -> Path:
        out = tmp_path / name
        out.mkdir()
        for file, data in EARLIER.items():
            (out / file).write_bytes(data)
        return out

    counted = tmp_path / "count"
    assert meterbook(*export_args(wh, folder_with_earlier("probe")), fault=f"count:0:{counted}").returncode == 0
    points = counted.stat().st_size
    assert points >= 4                                  # two files, each written and renamed, then the switch
    seen = set()
    # a child builds the marts first (seconds each): the second write (the Parquet renamed into
    # place, where the pair used to split), the middle, the switch and the clean-up after it
    for n in sorted({2, points // 2, points - 1, points}):
        out = folder_with_earlier(f"kill-{n}")
        proc = meterbook(*export_args(wh, out), fault=f"kill:{n}:{tmp_path / f'count-{n}'}")
        assert proc.returncode == -9, proc.stderr[-2000:]
        got = pair(out)
        assert set(got) == set(EARLIER), (n, sorted(got))
        parquet, csv = got[f"focus-{MONTH}.parquet"], got[f"focus-{MONTH}.csv"]
        earlier = (parquet, csv) == tuple(EARLIER.values())
        new = parquet.startswith(b"PAR1") and csv.startswith(b"AvailabilityZone,")
        assert earlier or new, f"killed at write {n}: a mixed pair"
        seen.add("earlier" if earlier else "new")
    assert seen == {"earlier", "new"}                  # the kills fell on both sides of the switch
