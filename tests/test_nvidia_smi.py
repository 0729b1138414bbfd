"""nvidia-smi inputs: --query-gpu CSV logs, dmon logs, nvidia_gpu_exporter text. The real
captures in ../shared (sections cut out of them as a user's log would hold them), fixtures in the
same formats, and a time series of known energy through ingest and build."""
from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from sources.reference_data import resolve_gpu

DATA = Path(__file__).parent / "data" / "nvidia_smi"
UUID_A = "GPU-0b1e2a3c-1111-2222-3333-444455556666"
UUID_B = "GPU-7f8e9d0c-aaaa-bbbb-cccc-ddddeeeeffff"


def ingest(warehouse: Path, *args: str | Path) -> tuple[int, dict, str]:
    """Exit code, the one file's JSON result, and what the CLI printed."""
    res = CliRunner().invoke(main, ["ingest", *map(str, args), "--warehouse", str(warehouse), "--json"])
    out = res.stdout
    files = json.loads(out[:out.rindex("}") + 1])["files"] if "{" in out else [{}]
    return res.exit_code, files[0], res.output


def loaded(warehouse: Path, *args: str | Path) -> dict:
    code, f, out = ingest(warehouse, *args)
    assert code == 0 and f["status"] == "loaded", out
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
    return f


def rejects(warehouse: Path) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute("select row_number, column_name, check_name, value, message from rejects order by row_number").fetchall()
    con.close()
    return rows


def parts(warehouse: Path) -> list[dict]:
    con = duckdb.connect(str(warehouse), read_only=True)
    cur = con.execute("select * from gpu_hour_parts order by gpu_uuid, hour_start")
    rows = [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]
    con.close()
    return rows


# --- the real captures --------------------------------------------------------------------

def capture_sections(samples: Path) -> list[tuple[str, str, str]]:
    """(capture, section title, text) of every query-gpu CSV and dmon section of the captures."""
    found = []
    for path in sorted((samples / "real-world" / "nvidia-smi").glob("*.txt")):
        lines = path.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            if re.match(r"# (idle|load) :: (query-gpu|dmon) ", line):
                end = next(j for j in range(i + 3, len(lines) + 1) if j == len(lines) or lines[j].startswith("#####"))
                found.append((path.name, line[2:], "\n".join(lines[i + 3:end]).strip("\n") + "\n"))
    return found


def test_every_query_gpu_and_dmon_section_of_the_captures_ingests(samples, tmp_path):
    sections = capture_sections(samples)
    assert len(sections) == 16          # 4 captures x idle/load x query-gpu/dmon
    for n, (capture, title, text) in enumerate(sections):
        path = tmp_path / f"{n}.{'csv' if 'query-gpu' in title else 'log'}"
        path.write_text(text, encoding="utf-8")
        # the captures' dmon ran without -o DT at dmon's default 1 s
        f = loaded(tmp_path / f"{n}.duckdb", path, "--start", "2026-07-14T09:00:00Z", "--interval", "1")
        assert f["kind"] == ("nvidia-smi" if "query-gpu" in title else "nvidia-smi-dmon"), (capture, title)
        assert f["totals"]["gpus"] == 1 and f["totals"]["energy_kwh"] > 0, (capture, title)
        mig = "mig" in capture
        # MIG: utilisation is [N/A] / '-' (rejects, as missing), power is the parent GPU's, once
        assert (f["rows_rejected"] > 0) == mig, (capture, title, f)
        if "query-gpu" in title:
            (gpu,) = parts(tmp_path / f"{n}.duckdb")
            assert resolve_gpu(gpu["gpu_model_raw"]) is not None, gpu["gpu_model_raw"]
            assert any("MIG mode on" in note for note in f["notes"]) == mig


def test_exporter_metrics_of_the_captures_ingest(samples, tmp_path):
    paths = sorted((samples / "real-world" / "nvidia-smi").glob("*.metrics"))
    assert len(paths) == 2
    for n, path in enumerate(paths):
        wh = tmp_path / f"{n}.duckdb"
        f = loaded(wh, path, "--scrape-time", "2026-07-14T09:00:44Z")
        assert f["kind"] == "nvidia-smi-exporter" and f["rows_rejected"] == 0
        (gpu,) = parts(wh)
        assert gpu["gpu_model_raw"] == "NVIDIA H100 80GB HBM3" and gpu["gpu_uuid"].startswith("GPU-")
        assert gpu["power_w_sum"] == pytest.approx(433.78 if "mig" in path.name else 631.95, abs=60)
        # one scrape: the per-process series (three processes) must not count as three
        assert gpu["n_scrapes"] == 1
        assert any("other metrics not read" in note for note in f["notes"])


# --- query-gpu CSV ------------------------------------------------------------------------

def test_query_gpu_log_with_units_repeated_header_and_no_readings(tmp_path):
    wh = tmp_path / "wh.duckdb"
    f = loaded(wh, DATA / "query_gpu_two_gpus_units_and_na.csv")
    # 6 sample lines x (power.draw, utilization.gpu); the repeated header is no row
    assert (f["rows_read"], f["rows_rejected"]) == (12, 2)
    assert [(r[2], r[3]) for r in rejects(wh)] == [("reading_present", "[N/A]"), ("reading_present", "[Not Supported]")]
    by_gpu = {p["gpu_uuid"]: p for p in parts(wh)}
    assert set(by_gpu) == {UUID_A, UUID_B}
    assert by_gpu[UUID_A]["power_w_sum"] == pytest.approx(345.12 + 347.50)
    assert by_gpu[UUID_B]["power_w_sum"] == pytest.approx(150 + 151 + 149)
    assert by_gpu[UUID_B]["util_sum"] == pytest.approx(0.22)
    assert by_gpu[UUID_B]["gpu_model_raw"] == "NVIDIA L40S" and resolve_gpu("NVIDIA L40S") == "L40S"
    # logged every 10 s, read at the default 30 s: the user is told, energy would be 3x
    assert any("samples every 10 s" in n and "set interval_s = 10" in n for n in f["notes"]), f["notes"]


@pytest.mark.parametrize("variant", ["crlf", "bom", "gzip"])
def test_line_breaks_bom_and_gzip_change_nothing(tmp_path, variant):
    """The reader counts lines itself: a BOM or gzip it did not undo once made that count differ
    from DuckDB's and refused the file."""
    import gzip
    raw = (DATA / "query_gpu_two_gpus_units_and_na.csv").read_bytes()
    data = {"crlf": raw.replace(b"\n", b"\r\n"), "bom": b"\xef\xbb\xbf" + raw, "gzip": gzip.compress(raw)}[variant]
    path = tmp_path / ("gpus.csv.gz" if variant == "gzip" else "gpus.csv")
    path.write_bytes(data)
    f = loaded(tmp_path / "wh.duckdb", path)
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (12, 10, 2)


def test_noheader_log_needs_its_field_list(tmp_path):
    path = DATA / "query_gpu_noheader_nounits.csv"
    code, f, out = ingest(tmp_path / "a.duckdb", path)
    assert code == 1 and "without a header" in f["error"] and "--query-gpu" in f["error"] and "Traceback" not in out
    f = loaded(tmp_path / "b.duckdb", path, "--query-gpu", "timestamp,uuid,index,name,power.draw,utilization.gpu")
    assert (f["rows_read"], f["rows_rejected"]) == (6, 1)
    (gpu,) = parts(tmp_path / "b.duckdb")
    assert gpu["power_w_sum"] == pytest.approx(345.12 + 347.50 + 346.00) and gpu["gpu_model_raw"] == "NVIDIA H100 80GB HBM3"


def test_bad_values_are_located_rejects(tmp_path):
    wh = tmp_path / "wh.duckdb"
    f = loaded(wh, DATA / "query_gpu_bad_values.csv")
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (11, 6, 5)
    got = [(check, column, value, message.split(":")[0]) for _, column, check, value, message in rejects(wh)]
    assert got == [("parses_as_number", "power.draw", "abc", "line 3"),
                   ("greater_than_or_equal_to(0)", "power.draw", "-5.00 W", "line 4"),
                   ("less_than_or_equal_to(100)", "utilization.gpu", "150 %", "line 5"),
                   ("record_shape", "line", "line 6: 2026/10/01 12:00:40.000, " + UUID_A + ", 300.00 W", "line 6"),
                   ("parses_as_number", "power.draw", "300.00 mW", "line 7")]
    (gpu,) = parts(wh)
    assert gpu["n_power"] == 2 and gpu["power_w_min"] == 300      # lines 2 and 5


def test_local_timestamps_are_read_in_the_given_zone(tmp_path):
    path = DATA / "query_gpu_noheader_nounits.csv"
    fields = "timestamp,uuid,index,name,power.draw,utilization.gpu"
    utc = loaded(tmp_path / "a.duckdb", path, "--query-gpu", fields)
    assert any("read as UTC" in note for note in utc["notes"])
    loaded(tmp_path / "b.duckdb", path, "--query-gpu", fields, "--timezone", "Asia/Tokyo")
    assert parts(tmp_path / "a.duckdb")[0]["first_ts"] == datetime(2026, 10, 1, 12, 0, 0, 123000)
    assert parts(tmp_path / "b.duckdb")[0]["first_ts"] == datetime(2026, 10, 1, 3, 0, 0, 123000)
    code, f, _ = ingest(tmp_path / "c.duckdb", path, "--query-gpu", fields, "--timezone", "Mars/Olympus")
    assert code == 1 and "unknown time zone 'Mars/Olympus'" in f["error"] and "for UTC" in f["error"]


def test_energy_counter_wins_over_power_samples(tmp_path):
    path = tmp_path / "counter.csv"
    lines = ["timestamp, uuid, power.draw [W], total_energy_consumption [mJ]"]
    for k in range(31):    # 300 W for 300 s: the counter rises 3,000,000 mJ every 10 s
        lines.append(f"2026/10/01 12:{k * 10 // 60:02d}:{k * 10 % 60:02d}.000, {UUID_A}, 999.00 W, {5_000_000 + k * 3_000_000} mJ")
    path.write_text("\n".join(lines) + "\n")
    wh = tmp_path / "wh.duckdb"
    f = loaded(wh, path)
    assert f["rows_rejected"] == 0
    assert f["totals"]["energy_kwh"] == pytest.approx(300 * 300 / 3.6e6)    # not 999 W x time


# --- dmon ---------------------------------------------------------------------------------

def test_dmon_with_date_and_time_columns_and_repeated_headers(tmp_path):
    wh = tmp_path / "wh.duckdb"
    f = loaded(wh, DATA / "dmon_dt_repeated_headers.log")
    assert f["kind"] == "nvidia-smi-dmon" and f["format_version"] == "dmon-dt"
    assert (f["rows_read"], f["rows_rejected"]) == (12, 1)       # 6 lines x (pwr, sm); one '-'
    (row,) = rejects(wh)
    assert row[1:4] == ("sm", "reading_present", "-") and row[4].startswith("line 6:")
    by_index = {p["gpu_index"]: p for p in parts(wh)}
    assert by_index["0"]["power_w_sum"] == 900 and by_index["1"]["power_w_sum"] == 450
    assert by_index["0"]["last_ts"] == datetime(2026, 10, 1, 12, 0, 2)


def test_dmon_without_times_needs_start_and_interval(tmp_path):
    path = DATA / "dmon_no_time.log"
    code, f, out = ingest(tmp_path / "a.duckdb", path)
    assert code == 1 and "carry no time" in f["error"] and "-o DT" in f["error"] and "Traceback" not in out
    f = loaded(tmp_path / "b.duckdb", path, "--start", "2026-10-01T12:00:00Z", "--interval", "1")
    (gpu,) = parts(tmp_path / "b.duckdb")
    assert f["rows_rejected"] == 3 and gpu["last_ts"] == datetime(2026, 10, 1, 12, 0, 2)


# --- energy of a known series, through ingest and build -------------------------------------

def write_constant_power_log(path: Path, watts: dict[str, float | tuple[float, ...]], interval_s: int, hours: int) -> None:
    """A `--query-gpu=timestamp,name,uuid,index,power.draw,utilization.gpu --format=csv -l N` log;
    a GPU given several powers takes them in turn, one per sample."""
    start = datetime(2026, 10, 1, 12, 0, 0)
    lines = ["timestamp, name, uuid, index, power.draw [W], utilization.gpu [%]"]
    for k in range(hours * 3600 // interval_s):
        t = (start + timedelta(seconds=k * interval_s)).strftime("%Y/%m/%d %H:%M:%S.000")
        for i, (uuid, w) in enumerate(watts.items()):
            p = w[k % len(w)] if isinstance(w, tuple) else w
            lines.append(f"{t}, NVIDIA H100 80GB HBM3, {uuid}, {i}, {p:.2f} W, 50 %")
    path.write_text("\n".join(lines) + "\n")


def test_constant_power_gives_its_energy_through_ingest_and_build(tmp_path):
    log = tmp_path / "gpus.csv"
    write_constant_power_log(log, {UUID_A: 300, UUID_B: 150}, interval_s=10, hours=1)
    config = tmp_path / "meterbook.toml"
    config.write_text("[telemetry]\ninterval_s = 10\n")
    wh = tmp_path / "wh.duckdb"
    res = CliRunner().invoke(main, ["ingest", str(log), "--warehouse", str(wh), "--config", str(config), "--json"])
    assert res.exit_code == 0, res.output
    assert not any("interval_s" in n for n in json.loads(res.stdout)["files"][0]["notes"])
    res = CliRunner().invoke(main, ["build", "--warehouse", str(wh), "--config", str(config)])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(wh), read_only=True)
    rows = con.execute("""select gpu_uuid, sum(energy_kwh), sum(energy_kwh_low), sum(energy_kwh_high), any_value(energy_tier)
                          from int_gpu_hours group by gpu_uuid""").fetchall()
    con.close()
    got = {r[0]: r[1:] for r in rows}
    for uuid, truth in ((UUID_A, 0.3), (UUID_B, 0.15)):
        kwh, low, high, tier = got[uuid]
        assert tier == "power_integral"
        assert low <= truth <= high and kwh == pytest.approx(truth, rel=1e-9)


def test_power_samples_give_a_range_of_one_interval_at_the_hours_swing(tmp_path):
    """Samples every 10 s alternating 300 W and 100 W: 0.2 kWh in the hour (mean 200 W), and the
    power between samples is unknown: one 10 s interval at the 200 W swing either side, 2,000 J
    (0.000556 kWh); a GPU at a steady 150 W has no swing and no range."""
    log = tmp_path / "gpus.csv"
    write_constant_power_log(log, {UUID_A: (300.0, 100.0), UUID_B: 150.0}, interval_s=10, hours=1)
    (tmp_path / "meterbook.toml").write_text("[telemetry]\ninterval_s = 10\n")
    wh = tmp_path / "wh.duckdb"
    for args in (["ingest", str(log)], ["build"]):
        res = CliRunner().invoke(main, [*args, "--warehouse", str(wh), "--config", str(tmp_path / "meterbook.toml")])
        assert res.exit_code == 0, res.output
    with duckdb.connect(str(wh), read_only=True) as con:
        got = dict((u, (k, lo, hi)) for u, k, lo, hi in con.execute(
            "select gpu_uuid, energy_kwh, energy_kwh_low, energy_kwh_high from int_gpu_hours").fetchall())
    swing = 200 * 10 / 3600 / 1000
    assert got[UUID_A] == pytest.approx((0.2, 0.2 - swing, 0.2 + swing), rel=1e-9)
    assert got[UUID_B] == pytest.approx((0.15, 0.15, 0.15), rel=1e-9)


# --- nvidia_gpu_exporter ------------------------------------------------------------------

def test_exporter_names_gpus_from_its_info_metric_and_rejects_a_ratio_above_one(tmp_path):
    wh = tmp_path / "wh.duckdb"
    f = loaded(wh, DATA / "exporter_two_gpus_ratio_above_one.metrics", "--scrape-time", "2026-10-01T12:00:00Z")
    assert f["kind"] == "nvidia-smi-exporter"
    assert (f["rows_read"], f["rows_rejected"]) == (4, 1)      # power and utilisation of two GPUs
    (row,) = rejects(wh)
    assert row[1:4] == ("nvidia_smi_utilization_gpu_ratio", "less_than_or_equal_to(1)", "1.5")
    assert row[0] == 12                                         # its line in the file
    by_uuid = {p["gpu_uuid"]: p for p in parts(wh)}
    assert by_uuid[UUID_B]["gpu_model_raw"] == "NVIDIA GeForce RTX 4080 SUPER"
    assert resolve_gpu("NVIDIA GeForce RTX 4080 SUPER") == "RTX-4080-SUPER"
    assert by_uuid[UUID_A]["power_w_sum"] == pytest.approx(631.95) and by_uuid[UUID_A]["hour_start"] == datetime(2026, 10, 1, 12)


# --- whatever the bytes: a balanced load or one Error ---------------------------------------

@pytest.mark.parametrize("seed", ["query_gpu_two_gpus_units_and_na.csv", "dmon_dt_repeated_headers.log",
                                  "exporter_two_gpus_ratio_above_one.metrics"])
def test_mutated_nvidia_smi_logs_load_balanced_or_fail_cleanly(tmp_path_factory, seed):
    from hypothesis import given

    from core.errors import InputError
    from pipelines.ingest import ingest as ingest_paths
    from pipelines.warehouse import connect
    from tests.test_fuzz import FUZZ, mutated
    root = tmp_path_factory.mktemp("fuzz")
    con = connect(root / "wh.duckdb")
    cases = iter(range(10**6))

    @FUZZ
    @given(mutated((DATA / seed).read_bytes()))
    def check(blob: bytes) -> None:
        path = root / f"case{next(cases)}" / seed
        path.parent.mkdir()
        path.write_bytes(blob)
        try:
            (res,) = ingest_paths(con, [path], options={"scrape_time": "2026-10-01T12:00:00Z"})
        except InputError as exc:
            assert str(exc).startswith(str(path)), str(exc)
            return
        assert res.rows_read == res.rows_loaded + res.rows_rejected
        located = con.execute("select count(distinct row_number), count(*) filter (where row_number is null) from rejects "
                              "where file_id = (select max(file_id) from source_files)").fetchone()
        assert res.status == "unchanged" or located == (res.rows_rejected, 0)

    try:
        check()
    finally:
        con.close()
