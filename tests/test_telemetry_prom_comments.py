"""dcgm-exporter text whose head has no comments leaves its comment lines to the grouping pass,
which drops them per series (issue 24); held here to the line-by-line drop for any file: the
same rows read, loaded and rejected, the same GPU-hour and pod parts, the same located rejects."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sources import dcgm_prom
from sources.base import HEAD_BYTES
from tests.telemetry_fixtures import ingested

START_MS = 1791244800000      # 2026-10-06T00:00:00Z
SERIES = ['DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",Hostname="node-a"}',
          'DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-bbbb",Hostname="node-a",pod="a#b"}',
          'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-aaaa",Hostname="node-a"}',
          'DCGM_FI_DEV_GPU_UTIL']
# Lines a dump may hold between samples: comments of every indent, with a brace or numbers in
# them, lines that only look like comments, blank and brace-led lines, and samples with odd times.
ODD_LINES = ["# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).", "# TYPE DCGM_FI_DEV_POWER_USAGE gauge", "#",
             "   # indented comment", "# braces {a=\"b\"} 5 1791244800000", "  # indented {a=\"b\"} 5", "# 5 1e30", "#EOF", "\t# tab is no blank",
             "", "   ", "}", "}DCGM_FI_DEV_POWER_USAGE 1 1791244800000", "x # not a comment 5",
             'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",Hostname="node-a"} 250 garbage',
             'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",Hostname="node-a"} 250',
             'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",Hostname="node-a"} 250 ']


def sample(i: int, series: int) -> str:
    """One sample; times are distinct per line, so no series has two samples at one time."""
    return f"{SERIES[series]} {200 + i % 97}.5 {START_MS + 7000 * i}"


lines = st.lists(st.one_of(st.integers(0, len(SERIES) - 1), st.sampled_from(ODD_LINES)), max_size=40)


def write(path: Path, body: list[int | str]) -> Path:
    """Samples without comments past the head detection reads, then `body`."""
    out, size = [], 0
    while size <= HEAD_BYTES:
        out.append(sample(len(out), 0))
        size += len(out[-1]) + 1
    first = len(out)
    out += [sample(first + i, b) if isinstance(b, int) else b for i, b in enumerate(body)]
    path.write_text("\n".join(out) + "\n")
    return path


def ingest(warehouse: Path, path: Path, per_group: bool, monkeypatch) -> dict[str, Any]:
    """Ingest with comments dropped per group (where the head has none) or always per line."""
    monkeypatch.setattr(dcgm_prom.DcgmPromReader, "comments_per_group", per_group)
    return ingested(warehouse, path, {"scrape_time": "2026-10-06T12:00:00Z"})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=lines)
@example(body=ODD_LINES)
@example(body=[0, "# HELP x", 1, "   # y", 2])
def test_comments_dropped_per_group_are_the_ones_dropped_per_line(tmp_path, monkeypatch, body):
    path = write(tmp_path / "dump.prom", body)
    assert ingest(tmp_path / "group.duckdb", path, True, monkeypatch) == ingest(tmp_path / "line.duckdb", path, False, monkeypatch)


def test_comment_lines_are_no_rows_either_way(tmp_path, monkeypatch):
    body = [1, "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).", "   # indented", 2, "#"]
    path = write(tmp_path / "dump.prom", body)
    got = ingest(tmp_path / "g.duckdb", path, True, monkeypatch)
    samples = len(path.read_text().splitlines()) - 3
    assert got["result"][1:4] == (samples, samples, 0)


@pytest.mark.parametrize("per_group", [True, False])
def test_a_tab_before_the_hash_makes_no_comment(tmp_path, monkeypatch, per_group):
    """Only blanks may stand before a comment's '#' (the independent line count says the same)."""
    path = write(tmp_path / "dump.prom", ["\t# not a comment"])
    got = ingest(tmp_path / "t.duckdb", path, per_group, monkeypatch)
    assert got["result"][3] == 1 and [r[2] for r in got["rejects"]] == ["sample_syntax"]
