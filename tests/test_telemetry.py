"""GPU telemetry into per-GPU-hour energy (issue 4): synthetic traces of known energy."""
from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from pipelines.config import Config
from pipelines.stages import run_stages
from pipelines.warehouse import connect
from tests.conftest import ingest_json
from tests.telemetry_fixtures import Trace, write_long_csv, write_prom_text, write_query_range

START = datetime(2026, 10, 6, 0, 0, 10)
INTERVAL = 30


def wavy_power(n: int, phase: float = 0.0) -> list[float]:
    return [250 + 120 * math.sin(k / 37 + phase) + (k % 7) for k in range(n)]


def trace(hours: float = 3, **kw) -> Trace:
    n = int(hours * 3600 / INTERVAL)
    return Trace(uuid=kw.pop("uuid", "GPU-11111111-2222-3333-4444-555555555555"), start=START, interval_s=INTERVAL,
                 power_w=wavy_power(n), **kw)


def gpu_hours(warehouse: Path) -> list[dict]:
    con = connect(warehouse)
    run_stages(con, Config(interval_s=INTERVAL))
    cur = con.execute("select * from int_gpu_hours order by gpu_uuid, hour_start")
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    con.close()
    return rows


def total_kwh(rows: list[dict]) -> float:
    return sum(r["energy_kwh"] for r in rows)


@pytest.mark.parametrize("writer, name", [(write_prom_text, "scrapes.prom"), (write_long_csv, "export.csv"),
                                           (write_query_range, "query_range.json")])
def test_counter_energy_equals_the_trace_in_every_shape(tmp_path, writer, name):
    t = trace()
    (f,) = ingest_json(tmp_path / "wh.duckdb", writer(tmp_path / name, [t]))["files"]
    assert f["rows_rejected"] == 0 and f["rows_read"] == f["rows_loaded"] == 2 * len(t.power_w)
    rows = gpu_hours(tmp_path / "wh.duckdb")
    assert {r["energy_tier"] for r in rows} == {"counter"}
    assert total_kwh(rows) == pytest.approx(t.true_kwh(), rel=1e-3)
    assert len(rows) == 3          # 00:00:10 .. 02:59:40: three UTC hours


def test_counter_reset_mid_hour_loses_nothing(tmp_path):
    t = trace(resets_at={int(1.4 * 3600 / INTERVAL)})
    ingest_json(tmp_path / "wh.duckdb", write_prom_text(tmp_path / "reset.prom", [t]))
    assert total_kwh(gpu_hours(tmp_path / "wh.duckdb")) == pytest.approx(t.true_kwh(), rel=1e-3)


def test_thirty_minute_gap_is_flagged_and_counter_energy_stays_exact(tmp_path):
    k0 = int(1.25 * 3600 / INTERVAL)
    t = trace(drop=set(range(k0, k0 + 60)))          # 60 x 30 s = 30 minutes without scrapes
    ingest_json(tmp_path / "wh.duckdb", write_prom_text(tmp_path / "gap.prom", [t]))
    rows = gpu_hours(tmp_path / "wh.duckdb")
    assert total_kwh(rows) == pytest.approx(t.true_kwh(), rel=1e-3)
    gap_rows = [r for r in rows if r["has_gap"]]
    assert [r["hour_start"].hour for r in gap_rows] == [1]
    assert gap_rows[0]["gap_s"] == pytest.approx(1800, abs=INTERVAL)


def test_power_only_gap_is_estimated_within_bounds(tmp_path):
    k0 = int(1.25 * 3600 / INTERVAL)
    t = trace(drop=set(range(k0, k0 + 60)))
    lines = [ln for ln in write_prom_text(tmp_path / "all.prom", [t]).read_text().splitlines()
             if "TOTAL_ENERGY" not in ln]
    (tmp_path / "power.prom").write_text("\n".join(lines) + "\n")
    ingest_json(tmp_path / "wh.duckdb", tmp_path / "power.prom")
    rows = gpu_hours(tmp_path / "wh.duckdb")
    hour1 = next(r for r in rows if r["hour_start"].hour == 1)
    assert hour1["energy_tier"] == "power_integral" and hour1["has_gap"] and hour1["estimated_kwh"] > 0
    true_hour1 = sum(p * INTERVAL for k, p in enumerate(t.power_w)
                     if START + timedelta(seconds=k * INTERVAL) >= START.replace(hour=1, second=0)
                     and START + timedelta(seconds=k * INTERVAL) < START.replace(hour=2, second=0)) / 3.6e6
    assert hour1["energy_kwh_low"] <= true_hour1 <= hour1["energy_kwh_high"]
    assert hour1["energy_kwh_low"] < hour1["energy_kwh"] < hour1["energy_kwh_high"]
    full_hours = [r for r in rows if not r["has_gap"]]
    # no power between samples is known: one interval at the hour's swing either side, no more
    swing_kwh = (max(t.power_w) - min(t.power_w)) * INTERVAL / 3.6e6
    assert full_hours and all(r["energy_kwh_low"] <= r["energy_kwh"] <= r["energy_kwh_high"]
                              and r["energy_kwh_high"] - r["energy_kwh_low"] <= 2 * swing_kwh + 1e-12 for r in full_hours)


def test_mig_gpu_with_three_instances_counts_once(tmp_path):
    t = trace()
    single = write_prom_text(tmp_path / "single.prom", [t]).read_text().splitlines()
    mig = [ln.replace('"}', f'",GPU_I_PROFILE="1g.10gb",GPU_I_ID="{i}"}}') for ln in single if not ln.startswith("#")
           for i in (1, 2, 3)]
    (tmp_path / "mig.prom").write_text("\n".join(mig) + "\n")
    ingest_json(tmp_path / "wh.duckdb", tmp_path / "mig.prom")
    rows = gpu_hours(tmp_path / "wh.duckdb")
    assert len({r["gpu_uuid"] for r in rows}) == 1 and len(rows) == 3
    assert total_kwh(rows) == pytest.approx(t.true_kwh(), rel=1e-3)
    assert max(r["coverage"] for r in rows) <= 1.0


def test_sentinels_are_rejected_and_never_become_energy(tmp_path):
    t = trace(hours=1)
    path = write_prom_text(tmp_path / "s.prom", [t])
    label = t.labels(0)
    with open(path, "a") as fh:
        last_ms = int((START + timedelta(seconds=len(t.power_w) * INTERVAL) - datetime(1970, 1, 1)).total_seconds() * 1000)
        fh.write(f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{label}}} 9223372036854775794 {last_ms}\n")
        fh.write(f"DCGM_FI_DEV_POWER_USAGE{{{label}}} 140737488355328 {last_ms}\n")
    (f,) = ingest_json(tmp_path / "wh.duckdb", path)["files"]
    assert f["rows_rejected"] == 2 and f["rows_read"] == f["rows_loaded"] + 2
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert {r[0] for r in con.execute("select check_name from rejects").fetchall()} == {"dcgm_blank_sentinel"}
    lines = path.read_text().splitlines()
    assert {r[0] for r in con.execute("select row_number from rejects").fetchall()} == {len(lines) - 1, len(lines)}
    con.close()
    assert total_kwh(gpu_hours(tmp_path / "wh.duckdb")) == pytest.approx(t.true_kwh(), rel=1e-3)


def test_same_telemetry_twice_changes_nothing_and_a_second_month_adds(tmp_path):
    wh = tmp_path / "wh.duckdb"
    oct_ = write_prom_text(tmp_path / "oct.prom", [trace()])
    ingest_json(wh, oct_)
    before = [(r["gpu_uuid"], r["hour_start"], r["energy_kwh"]) for r in gpu_hours(wh)]
    assert ingest_json(wh, oct_)["files"][0]["status"] == "unchanged"
    assert [(r["gpu_uuid"], r["hour_start"], r["energy_kwh"]) for r in gpu_hours(wh)] == before
    # the same board a month later, its counter restarted: October's observed hours keep their
    # energy; the four weeks between are a gap with a reset inside, filled as estimated
    nov = Trace(uuid=trace().uuid, start=datetime(2026, 11, 3), interval_s=INTERVAL, power_w=wavy_power(240))
    ingest_json(wh, write_prom_text(tmp_path / "nov.prom", [nov]))
    after = gpu_hours(wh)
    observed = [(r["gpu_uuid"], r["hour_start"], r["energy_kwh"]) for r in after if r["coverage"] > 0]
    assert observed[:len(before) - 1] == before[:-1] and len(observed) == len(before) + 2
    filled = [r for r in after if r["coverage"] == 0]
    assert filled and {r["energy_tier"] for r in filled} == {"counter_gap"}
    assert all(r["energy_kwh_low"] < r["energy_kwh_high"] for r in filled if r["estimated_kwh"] > 0)


def steady(n: int, watts: float = 350.0) -> list[float]:
    """A board held near one power: the power around a gap then tells what ran inside it."""
    return [watts + 3 * math.sin(k / 37) for k in range(n)]


def kwh_by_month(rows: list[dict], key: str = "energy_kwh") -> dict[str, float]:
    out: dict[str, float] = {}
    for r in rows:
        out[r["hour_start"].strftime("%Y-%m")] = out.get(r["hour_start"].strftime("%Y-%m"), 0.0) + r[key]
    return out


def true_kwh_by_month(t: Trace) -> dict[str, float]:
    """What the board drew in each month: the counter's increment at each sample (power x interval
    over the interval that sample closes), by the month of the sample's time."""
    out: dict[str, float] = {}
    for k, p in enumerate(t.power_w[1:], start=1):
        month = (t.start + timedelta(seconds=k * t.interval_s)).strftime("%Y-%m")
        out[month] = out.get(month, 0.0) + round(p * t.interval_s * 1000) / 3.6e9
    return out


SEPT_20 = datetime(2026, 9, 20, 12, 0, 10)


def month_trace(resets: set[int]) -> Trace:
    """32 days of one A100 at about 350 W; 30 days of it (Sept 21 to Oct 21) never scraped. Its
    counter read 100 MJ when the trace began (energy since the driver loaded, as DCGM counts)."""
    n = 32 * 24 * 120
    gap = set(range(24 * 120, 24 * 120 + 30 * 24 * 120))
    return Trace(uuid="GPU-99999999-2222-3333-4444-555555555555", start=SEPT_20, interval_s=INTERVAL,
                 power_w=steady(n), drop=gap, resets_at=resets, counter0_mj=100_000_000_000)


def test_a_thirty_day_gap_spreads_its_counter_rise_over_both_months(tmp_path):
    t = month_trace(set())
    ingest_json(tmp_path / "wh.duckdb", write_prom_text(tmp_path / "gap.prom", [t]))
    rows = gpu_hours(tmp_path / "wh.duckdb")
    got, truth = kwh_by_month(rows), true_kwh_by_month(t)
    assert set(got) == {"2026-09", "2026-10"}
    for month in truth:
        assert got[month] == pytest.approx(truth[month], rel=1e-3)
    filled = [r for r in rows if r["coverage"] == 0]
    assert len(filled) == 30 * 24 and {r["energy_tier"] for r in filled} == {"counter_gap"}
    assert all(r["estimated_kwh"] == 0 and r["gap_s"] > 29 * 86400 for r in filled)   # measured, only placed
    assert all(r["energy_kwh"] <= r["board_max_kwh"] for r in rows)


def test_a_reset_inside_the_gap_and_one_within_an_hour_keep_each_month_within_a_thousandth(tmp_path):
    # the driver reloads on Oct 19 (inside the gap: the next reading is below the last one) and
    # again on Oct 22 at 10:15 (between two scrapes). A reset early in a gap leaves the counter
    # above its last reading and cannot be seen: its rise is then taken for the gap's energy.
    in_gap = (datetime(2026, 10, 19, 6) - SEPT_20).total_seconds() // INTERVAL
    in_hour = (datetime(2026, 10, 22, 10, 15) - SEPT_20).total_seconds() // INTERVAL
    t = month_trace({int(in_gap), int(in_hour)})
    ingest_json(tmp_path / "wh.duckdb", write_prom_text(tmp_path / "resets.prom", [t]))
    rows = gpu_hours(tmp_path / "wh.duckdb")
    got, truth = kwh_by_month(rows), true_kwh_by_month(t)
    for month in truth:
        assert got[month] == pytest.approx(truth[month], rel=1e-3)
    # what ran before the reset is estimated, with a range that holds the truth
    estimated = [r for r in rows if r["estimated_kwh"] > 0]
    assert estimated and {r["hour_start"].month for r in estimated} == {9, 10}
    assert kwh_by_month(rows, "energy_kwh_low")["2026-09"] < truth["2026-09"] < kwh_by_month(rows, "energy_kwh_high")["2026-09"]


def test_an_hour_above_what_the_board_can_draw_is_cut_and_reported(tmp_path):
    # another board's counter reaches this GPU's series for one scrape: +20 kWh in an hour
    t = trace()
    path = write_prom_text(tmp_path / "jump.prom", [t])
    lines = path.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("DCGM_FI_DEV_TOTAL_ENERGY") and "T01:" not in ln and i > len(lines) // 2)
    name, value, ts = lines[k].rsplit(" ", 2)
    jumped = [ln if not ln.startswith("DCGM_FI_DEV_TOTAL_ENERGY") or i < k
              else f"{ln.rsplit(' ', 2)[0]} {int(ln.rsplit(' ', 2)[1]) + 72_000_000_000} {ln.rsplit(' ', 2)[2]}"
              for i, ln in enumerate(lines)]
    path.write_text("\n".join(jumped) + "\n")
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, path)
    rows = gpu_hours(wh)
    assert max(r["energy_kwh"] for r in rows) <= rows[0]["board_max_kwh"]
    assert sum(r["excess_kwh"] for r in rows) == pytest.approx(20, rel=0.05)
    assert total_kwh(rows) < t.true_kwh() + rows[0]["board_max_kwh"]
    con = duckdb.connect(str(wh), read_only=True)
    (value, energy), = con.execute("select value, energy_kwh from findings_month where finding = 'energy_above_board'").fetchall()
    assert value == pytest.approx(20, rel=0.05)
    assert con.execute("select count(*) from contract_findings where table_name = 'int_gpu_hours'").fetchone()[0] == 0
    con.close()


def test_dmon_log_with_repeated_headers_parses(tmp_path):
    path = Path(__file__).parent / "data" / "dcgm" / "dmon_repeated_headers_with_time_prefix.log"
    (f,) = ingest_json(tmp_path / "wh.duckdb", path)["files"]
    assert f["kind"] == "dcgm-dmon"
    assert f["rows_read"] == 30 * 2 * 5 and f["rows_rejected"] == 1          # one N/A
    # energy = sum of power x 10 s after the first sample, per GPU (200+s W and 210+s W)
    truth_kwh = sum(10 * (200 + s) + 10 * (210 + s) for s in range(1, 30)) / 3.6e6
    assert f["totals"]["energy_kwh"] == pytest.approx(truth_kwh, rel=1e-9)
    assert total_kwh(gpu_hours(tmp_path / "wh.duckdb")) == pytest.approx(truth_kwh, rel=1e-9)
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    (check, value), = con.execute("select check_name, value from rejects").fetchall()
    assert check == "dcgm_blank_sentinel"


def test_dmon_without_times_needs_start_and_interval(tmp_path):
    src = (Path(__file__).parent / "data" / "dcgm" / "dmon_repeated_headers_with_time_prefix.log").read_text()
    bare = tmp_path / "dmon.log"
    bare.write_text("\n".join(ln.split(" ", 1)[1] if ln.startswith("2026") else ln for ln in src.splitlines()) + "\n")
    from tests.conftest import run_cli
    code, _, err = run_cli("ingest", str(bare), "--warehouse", str(tmp_path / "a.duckdb"))
    assert code == 1 and "--start" in err and "Traceback" not in err
    code, out, err = run_cli("ingest", str(bare), "--warehouse", str(tmp_path / "b.duckdb"), "--start", "2026-10-06T00:00:00Z",
                             "--interval", "10", "--json")
    assert code == 0, err
    import json
    (f,) = json.loads(out)["files"]
    assert f["rows_rejected"] == 1 and f["totals"]["energy_kwh"] == pytest.approx(
        sum(10 * (200 + s) + 10 * (210 + s) for s in range(1, 30)) / 3.6e6, rel=1e-9)


def test_blanks_between_value_and_timestamp_are_one_separator(tmp_path):
    """The text format separates tokens by blanks, not by one space: with two, the timestamp was
    once read as the value and the sample dated at the scrape time."""
    t = trace()
    path = write_prom_text(tmp_path / "scrapes.prom", [t])
    path.write_text(path.read_text().replace("} ", "}  ").replace(" 1791", "   1791"))
    assert "   1791" in path.read_text()
    (f,) = ingest_json(tmp_path / "wh.duckdb", path)["files"]
    assert f["rows_rejected"] == 0
    rows = gpu_hours(tmp_path / "wh.duckdb")
    assert len(rows) == 3 and rows[0]["hour_start"] == START.replace(second=0)
    assert total_kwh(rows) == pytest.approx(t.true_kwh(), rel=1e-3)


def test_ingest_json_energy_is_the_reports_energy_for_the_same_file(tmp_path):
    # a reset mid-file and a two-hour gap: a last-minus-first total would lose or misplace both
    k0 = int(1.5 * 3600 / INTERVAL)
    t = trace(hours=6, resets_at={int(4.2 * 3600 / INTERVAL)}, drop=set(range(k0, k0 + 240)))
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, write_prom_text(tmp_path / "t.prom", [t]))["files"]
    con = connect(wh)
    run_stages(con, Config(interval_s=INTERVAL))
    report_kwh = con.execute("select sum(it_energy_kwh) from team_month").fetchone()[0]
    con.close()
    assert f["totals"]["energy_kwh"] == pytest.approx(report_kwh, rel=1e-12)
    assert report_kwh == pytest.approx(t.true_kwh(), rel=1e-3)


DCGM_DATA = Path(__file__).parent / "data" / "dcgm"


def test_dmon_stopped_by_ctrl_c_with_bare_id_line_still_needs_start(tmp_path):
    """dcgmi's 'dmon was stopped do to receiving a signal' once passed for a time prefix: the
    --start requirement was skipped and all 96 samples rejected, yet the file reported loaded."""
    from tests.conftest import run_cli
    path = DCGM_DATA / "dmon_stopped_by_signal_bare_id_line.log"
    code, out, err = run_cli("ingest", str(path), "--warehouse", str(tmp_path / "a.duckdb"))
    assert code == 1 and "dmon lines carry no time" in err and "Traceback" not in err
    (f,) = ingest_json(tmp_path / "b.duckdb", path, "--start", "2026-10-06T00:00:00Z", "--interval", "1")["files"]
    # 2 GPUs x 16 samples x 3 fields; the bare ID units line and the stop message are no rows
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (96, 96, 0)
    assert f["totals"]["gpus"] == 2
    assert any("stopped by a signal (line 40)" in n for n in f["notes"])
    con = duckdb.connect(str(tmp_path / "b.duckdb"), read_only=True)
    last = con.execute("select max(last_ts) from gpu_hour_parts").fetchone()[0]
    assert last == datetime(2026, 10, 6, 0, 0, 15)      # the 16th sample, 1 s apart


def test_dmon_line_that_is_no_sample_is_one_reject(tmp_path):
    (f,) = ingest_json(tmp_path / "wh.duckdb", DCGM_DATA / "dmon_stray_message_line.log")["files"]
    assert f["rows_read"] == 30 * 2 * 5 + 1 and f["rows_rejected"] == 2       # the message, and one N/A
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    (row, check, value), = con.execute("select row_number, check_name, value from rejects where column_name = 'dmon_line'").fetchall()
    assert check == "sample_syntax" and value.startswith("line 13: Error: Unable to get latest values")


def test_long_csv_row_with_an_empty_metric_cell_is_one_located_reject(tmp_path):
    """An empty metric cell was counted as read but neither loaded nor rejected (the ingest
    stopped on its own check, with a traceback): its group's metric is NULL, and NULL failed no
    name test. Found by tests/test_telemetry_typed_read.py."""
    path = write_long_csv(tmp_path / "samples.csv", [trace(hours=0.05)])
    lines = path.read_text().splitlines()
    cells = lines[3].split(",")
    cells[1] = ""
    path.write_text("\n".join([*lines[:3], ",".join(cells), *lines[4:]]) + "\n")
    (f,) = ingest_json(tmp_path / "wh.duckdb", path)["files"]
    assert f["rows_read"] == len(lines) - 1 and (f["rows_loaded"], f["rows_rejected"]) == (len(lines) - 2, 1)
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute("select row_number, check_name from rejects").fetchall() == [(3, "sample_syntax")]


def test_prom_text_line_starting_with_a_brace_is_one_located_reject(tmp_path):
    """DuckDB reads a line that starts with '}' with a NULL first field; the comment filter took
    NULL for false and dropped the line, and the independent line count then refused the file."""
    t = trace(hours=0.25)
    path = write_prom_text(tmp_path / "scrapes.prom", [t])
    lines = path.read_text().splitlines()
    bad = len(lines) - 3
    lines[bad - 1] = "}" + lines[bad - 1].split("}", 1)[1]
    path.write_text("\n".join(lines) + "\n")
    (f,) = ingest_json(tmp_path / "wh.duckdb", path)["files"]
    assert (f["rows_read"] - f["rows_loaded"], f["rows_rejected"]) == (1, 1)
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    (row, check, value), = con.execute("select row_number, check_name, value from rejects").fetchall()
    assert (row, check) == (bad, "sample_syntax") and value.startswith("} ")


def test_prom_text_time_that_is_no_number_is_a_reject_not_the_scrape_time(tmp_path):
    """A written time that did not parse fell back to the scrape's time (the file's mtime for a
    timestamped dump), so '999 garbage' loaded as a sample of another hour, and a time past what
    milliseconds hold stopped the whole file with a conversion error. Both are located rejects;
    a value followed by blanks only is still a sample of the scrape."""
    t = trace(hours=0.25)
    path = write_prom_text(tmp_path / "dump.prom", [t])
    lines = path.read_text().splitlines()
    n = len(lines)
    metric_labels = lines[-1].rsplit(" ", 2)[0]
    path.write_text("\n".join([*lines, f"{metric_labels} 999 garbage", f"{metric_labels} 998 1e30"]) + "\n")
    (f,) = ingest_json(tmp_path / "wh.duckdb", path)["files"]
    assert (f["rows_read"] - f["rows_loaded"], f["rows_rejected"]) == (2, 2)
    assert not any("scrape time" in note for note in f["notes"])
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute("select row_number, check_name from rejects order by 1").fetchall() == [
        (n + 1, "sample_syntax"), (n + 2, "sample_syntax")]

    untimed = tmp_path / "scrape-2026-10-06T10-00-00.prom"
    untimed.write_text(f"{metric_labels} 250.5 \n{metric_labels.replace('POWER_USAGE', 'GPU_UTIL')} 40\n")
    (g,) = ingest_json(tmp_path / "wh2.duckdb", untimed)["files"]
    assert (g["rows_loaded"], g["rows_rejected"]) == (2, 0)
    assert any("scrape time from file_name: 2026-10-06T10:00:00Z" in note for note in g["notes"])
