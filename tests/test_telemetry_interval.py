"""Readings further apart than `[telemetry] interval_s` are a finding (telemetry_interval): each
reading counts interval_s of observed time, so such readings count too little of it."""
from __future__ import annotations

from datetime import datetime

import pytest

from pipelines.config import Config
from pipelines.stages import run_stages
from pipelines.warehouse import connect
from tests.conftest import ingest_json
from tests.telemetry_fixtures import Trace, write_prom_text

START = datetime(2026, 10, 6, 0, 0, 10)


def gpu(uuid_digit: str, interval_s: int, hours: int = 6, drop: set[int] | None = None) -> Trace:
    n = hours * 3600 // interval_s
    return Trace(uuid=f"GPU-{uuid_digit * 8}-2222-3333-4444-555555555555", start=START, interval_s=interval_s,
                 power_w=[300.0 + (k % 5) for k in range(n)], drop=drop or set())


def interval_findings(tmp_path, traces: list[Trace], interval_s: float, **findings: float) -> tuple[list[tuple], float]:
    wh = tmp_path / "wh.duckdb"
    for i, t in enumerate(traces):
        ingest_json(wh, write_prom_text(tmp_path / f"gpu{i}.prom", [t]))
    con = connect(wh)
    run_stages(con, Config(interval_s=interval_s, findings=findings))
    rows = con.execute("select month, subject, value, unit, detail, assumption_ids from findings_month "
                       "where finding = 'telemetry_interval'").fetchall()
    observed = con.execute("select sum(coverage) from int_gpu_hours").fetchall()[0][0]
    con.close()
    return rows, observed


def test_a_gpu_read_every_five_minutes_under_a_thirty_second_setting_is_found(tmp_path):
    rows, observed = interval_findings(tmp_path, [gpu("1", 300), gpu("2", 30)], 30)
    assert len(rows) == 1
    month, subject, value, unit, detail, ids = rows[0]
    assert (month, subject, unit) == ("2026-10", "telemetry interval", "h")
    assert value == 6                                   # the 300 s GPU's six hours
    assert detail.startswith("1 of 2 GPUs were read about every 300 s, not every 30 s")
    assert ids == ["assumptions:findings_scrape_interval_tolerance"]
    # what the finding warns of: the 300 s GPU counts a tenth of its hours as observed
    assert observed == pytest.approx(6 + 6 * 0.1, abs=0.01)


def test_readings_closer_than_the_setting_are_not_a_finding(tmp_path):
    """A GPU read every 30 s under a 300 s setting counts each hour whole (3,600 s at most):
    closer readings count no more than they span, and are not this finding."""
    rows, observed = interval_findings(tmp_path, [gpu("1", 300), gpu("2", 30)], 300)
    assert rows == [] and observed == pytest.approx(12, abs=0.01)


def test_gaps_and_matching_intervals_find_nothing(tmp_path):
    # a 30-minute gap in one hour; a GPU missing every other scrape in three of its six hours (not most)
    gappy = gpu("1", 30, drop=set(range(150, 210)))
    patchy = gpu("2", 30, drop={k for k in range(360) if k % 2})
    rows, _ = interval_findings(tmp_path, [gappy, patchy], 30)
    assert rows == []


def test_the_tolerance_is_a_findings_setting(tmp_path):
    """[findings] scrape_interval_tolerance = 20 lets a 300 s GPU under a 30 s setting pass."""
    rows, _ = interval_findings(tmp_path, [gpu("1", 300)], 30, scrape_interval_tolerance=20.0)
    assert rows == []


def test_the_demo_config_says_the_interval_its_telemetry_was_written_at(tmp_path):
    from pipelines.config import load_config
    from pipelines.demo import config_text, fleet
    (tmp_path / "meterbook.toml").write_text(config_text(fleet(), 2025, 300), encoding="utf-8")
    assert load_config(tmp_path / "meterbook.toml").interval_s == 300


def test_readings_closer_than_the_setting_count_no_more_than_their_span(tmp_path):
    """Twenty minutes read every 10 s under a 30 s setting: 120 readings would count 3,600 s; the
    hour is observed for the 20 minutes they span (and one interval after the last)."""
    short = Trace(uuid="GPU-33333333-2222-3333-4444-555555555555", start=START, interval_s=10,
                  power_w=[300.0] * 120)
    rows, observed = interval_findings(tmp_path, [short], 30)
    assert rows == []
    assert observed == pytest.approx((1190 + 30) / 3600, abs=1e-6)
