"""Plausibility limits at ingest (sources/reference/telemetry_limits.csv): a reading no board can
produce is a located reject, never a value loaded and capped later."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ingest_json
from tests.telemetry_fixtures import Trace, ms, write_long_csv, write_prom_text
from tests.telemetry_fixtures import located_rejects as rejects
from tests.test_telemetry import gpu_hours

START = datetime(2026, 10, 6, 0, 0, 10)
INTERVAL = 30
UUID = "GPU-11111111-2222-3333-4444-555555555555"


def h100(power_w: list[float], **kw) -> Trace:
    return Trace(uuid=UUID, start=START, interval_s=INTERVAL, power_w=power_w, **kw)


def as_h100(path: Path) -> Path:
    path.write_text(path.read_text().replace("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"))
    return path


@pytest.mark.parametrize("writer, name", [(write_prom_text, "h100.prom"), (write_long_csv, "h100.csv")])
def test_five_kilowatts_on_an_h100_is_a_located_reject_not_a_capped_value(tmp_path, writer, name):
    """The gauge reads 5,000 W once (the counter, integrating the board's real 600 W, does not)."""
    path = as_h100(writer(tmp_path / name, [h100([600.0] * 120)]))
    lines = path.read_text().splitlines()
    k = [i for i, ln in enumerate(lines) if "DCGM_FI_DEV_POWER_USAGE" in ln and "600.000" in ln][50]
    lines[k] = lines[k].replace("600.000", "5000.000")
    path.write_text("\n".join(lines) + "\n")
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, path)["files"]
    assert (f["rows_rejected"], f["rows_read"] - f["rows_loaded"]) == (1, 1)
    # prom text numbers lines from 1; a CSV numbers data rows, after its header
    assert rejects(wh) == [(k + 1 if name.endswith(".prom") else k, "plausible_power")]
    con = duckdb.connect(str(wh), read_only=True)
    assert con.execute("select max(power_w_max) from gpu_hour_parts").fetchone()[0] == 600
    con.close()
    assert sum(r["excess_kwh"] for r in gpu_hours(wh)) == 0


def test_utilisation_of_150_percent_is_a_located_reject(tmp_path):
    t = h100([300.0] * 10)
    path = write_prom_text(tmp_path / "util.prom", [t])
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, f"DCGM_FI_DEV_GPU_UTIL{{{t.labels()}}} 150 {ms(START)}",
                               f"DCGM_FI_DEV_GPU_UTIL{{{t.labels()}}} 100 {ms(START)}"]) + "\n")
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, path)["files"]
    assert (f["rows_rejected"], f["rows_loaded"]) == (1, f["rows_read"] - 1)
    assert rejects(wh) == [(len(lines) + 1, "plausible_util")]


def test_a_counter_that_only_decreases_loads_no_energy(tmp_path):
    t = h100([300.0] * 120)
    path = write_prom_text(tmp_path / "down.prom", [t])
    # the counter written backwards: every reading lower than the one before, none near zero
    lines = path.read_text().splitlines()
    energy = [i for i, ln in enumerate(lines) if ln.startswith("DCGM_FI_DEV_TOTAL_ENERGY")]
    values = [int(lines[i].rsplit(" ", 2)[1]) for i in energy]
    for i, v in zip(energy, reversed(values)):
        head, _, ts = lines[i].rsplit(" ", 2)
        lines[i] = f"{head} {v} {ts}"
    path.write_text("\n".join(lines) + "\n")
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, path)["files"]
    assert f["rows_rejected"] == len(energy) - 1
    assert {c for _, c in rejects(wh)} == {"plausible_energy_reset"}
    rows = gpu_hours(wh)
    # no reset's reading of billions of mJ, cut to the board's maximum: at most the gauge's energy
    assert sum(r["excess_kwh"] for r in rows) == 0
    assert sum(r["energy_kwh"] for r in rows) <= 300 * 120 * INTERVAL / 3.6e6


def test_a_real_reset_is_still_a_reset(tmp_path):
    t = h100([300.0] * 240, resets_at={100})
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, write_prom_text(tmp_path / "reset.prom", [t]))["files"]
    assert f["rows_rejected"] == 0
    assert sum(r["energy_kwh"] for r in gpu_hours(wh)) == pytest.approx(t.true_kwh(), rel=1e-3)
