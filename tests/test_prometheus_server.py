"""A month pulled from a real Prometheus server (Debian's prometheus, started here on a loopback
port, its TSDB backfilled with promtool from DCGM series written for the test in OpenMetrics)
gives what the same samples give from a file; refusals are one Error line and change nothing."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.config import Config
from pipelines.stages import run_stages
from pipelines.warehouse import connect
from tests.telemetry_fixtures import Trace
from tests.wh_state import snapshot

INTERVAL = 60
# Two GPUs from 22:00 on the last day of September into October 1st: a month edge, a counter
# reset (driver reload) and a 20 minute gap (never scraped) on the second GPU.
START = datetime(2026, 9, 30, 22, 0)
HOURS = 8
MONTH = "2026-10"
# Points per query the test server allows (--query.max-samples): the pulls below plan their
# chunks under it; a larger --max-samples is refused with 422.
SERVER_MAX_SAMPLES = 800


def traces() -> list[Trace]:
    n = HOURS * 3600 // INTERVAL
    power = [300 + 50 * ((k * 7) % 11) for k in range(n)]
    return [Trace("GPU-aaaaaaaa-0000-0000-0000-000000000001", START, INTERVAL, power),
            Trace("GPU-aaaaaaaa-0000-0000-0000-000000000002", START, INTERVAL, power[::-1],
                  resets_at={200}, drop=set(range(300, 320)))]


def in_month(ts: datetime) -> bool:
    return ts >= datetime(2026, 10, 1)


def series_lines(name: str, value_of, only=lambda ts: True, seconds: bool = True) -> list[str]:
    out = []
    for i, t in enumerate(traces()):
        for ts, p, c in t.samples():
            if only(ts):
                stamp = (ts - datetime(1970, 1, 1)).total_seconds()
                out.append(f"{name}{{{t.labels(i)}}} {value_of(p, c)} {int(stamp) if seconds else int(stamp * 1000)}")
    return out


METRICS = (("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", lambda p, c: c), ("DCGM_FI_DEV_POWER_USAGE", lambda p, c: f"{p:.3f}"),
           ("DCGM_FI_DEV_GPU_UTIL", lambda p, c: int(p) % 101))


def write_openmetrics(path: Path) -> Path:
    """OpenMetrics text (timestamps in seconds, families together, `# EOF`), as promtool backfills;
    every sample, September's included."""
    lines = []
    for name, value in METRICS:
        lines += [f"# TYPE {name} gauge", *series_lines(name, value)]
    path.write_text("\n".join(lines) + "\n# EOF\n")
    return path


def write_exporter_text(path: Path) -> Path:
    """The month's samples as dcgm-exporter text with timestamps (ms): what the pull must equal."""
    lines = []
    for name, value in METRICS:
        lines += [f"# TYPE {name} gauge", *series_lines(name, value, in_month, seconds=False)]
    path.write_text("\n".join(lines) + "\n")
    return path


def binaries() -> tuple[str, str]:
    found = shutil.which("prometheus"), shutil.which("promtool")
    if None in found:
        if os.environ.get("CI"):
            pytest.fail("prometheus/promtool missing: CI must install Debian's prometheus (make test does, as root)")
        pytest.skip("prometheus/promtool not installed (apt-get install prometheus)")
    return found  # type: ignore[return-value]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(folder: Path, *flags: str) -> tuple[subprocess.Popen, str]:
    prometheus, promtool = binaries()
    data = folder / "data"
    if not data.exists():
        subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(write_openmetrics(folder / "dcgm.om")), str(data)],
                       check=True, capture_output=True)
    (folder / "prometheus.yml").write_text("scrape_configs: []\n")
    port = free_port()
    # Backfilled blocks carry no staleness markers: with the default 5 m lookback a query would
    # repeat a sample into a gap. A lookback under the step returns each sample once, as scraped.
    proc = subprocess.Popen([prometheus, f"--config.file={folder / 'prometheus.yml'}", f"--storage.tsdb.path={data}",
                             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=100y",
                             "--query.lookback-delta=1s", f"--query.max-samples={SERVER_MAX_SAMPLES}", *flags],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/-/ready", timeout=1)   # noqa: S310
            return proc, url
        except urllib.error.HTTPError as exc:
            if exc.code == 401:
                return proc, url
        except OSError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    pytest.fail("prometheus did not become ready")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc, url = start_server(tmp_path_factory.mktemp("prometheus"))
    yield url
    proc.terminate()
    proc.wait(10)


def config(folder: Path) -> Path:
    path = folder / "meterbook.toml"
    path.write_text(f"[telemetry]\ninterval_s = {INTERVAL}\n")
    return path


def pull(wh: Path, url: str, *more: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, ["ingest", url.replace("http://", "prometheus://"), "--month", MONTH, "--warehouse", str(wh),
                                    "--max-samples", str(SERVER_MAX_SAMPLES), "--config", str(config(wh.parent)), *more])
    return res.exit_code, res.stdout, res.stderr


def marts(wh: Path) -> dict:
    con = connect(wh)
    try:
        run_stages(con, Config(interval_s=INTERVAL))
        q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        return {"gpu_hours": q("select * exclude (file_id) from int_gpu_hours order by all") if has_file_id(con)
                else q("select * from int_gpu_hours order by all"),
                "team_month": q("select * from team_month order by all")}
    finally:
        con.close()


def has_file_id(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("select count(*) from duckdb_columns() where table_name = 'int_gpu_hours' and column_name = 'file_id'").fetchone()[0])


def test_a_pulled_month_gives_the_marts_of_the_same_samples_from_a_file(server, tmp_path):
    pulled, filed = tmp_path / "pulled.duckdb", tmp_path / "filed.duckdb"
    code, out, err = pull(pulled, server)
    assert code == 0, err
    res = CliRunner().invoke(main, ["ingest", str(write_exporter_text(tmp_path / "october.prom")), "--warehouse", str(filed),
                                    "--config", str(config(tmp_path))])
    assert res.exit_code == 0, res.output
    a, b = marts(pulled), marts(filed)
    assert a["gpu_hours"] and a["gpu_hours"] == b["gpu_hours"]
    assert a["team_month"] and a["team_month"] == b["team_month"]
    con = duckdb.connect(str(pulled), read_only=True)
    # only October: the month edge holds, and every chunk is a recorded source file
    assert con.execute("select min(hour_start), max(hour_start) from gpu_hour_parts").fetchone() == (
        datetime(2026, 10, 1), datetime(2026, 10, 1) + timedelta(hours=HOURS - 3))
    files = con.execute("select path, kind, sha256 from source_files where status = 'loaded'").fetchall()
    uuids = [r[0] for r in con.execute("select distinct gpu_uuid from gpu_hour_parts order by 1").fetchall()]
    con.close()
    assert uuids == [t.uuid for t in traces()]     # labels kept: each series is its GPU
    assert len(files) > 1    # several chunks under the server's limit
    assert all(p.startswith(server + "/api/v1/query_range?query=%7B__name__%3D~%22DCGM_FI_") and k == "prom-range" and len(s) == 64
               for p, k, s in files)
    assert "[1/" in err                 # progress on stderr


def test_a_second_pull_fetches_nothing(server, tmp_path):
    wh = tmp_path / "wh.duckdb"
    assert pull(wh, server)[0] == 0
    before = snapshot(wh)
    code, out, err = pull(wh, server)
    assert code == 0 and out.startswith("0 files"), out + err
    assert snapshot(wh) == before


def test_too_many_samples_is_one_error_line_and_the_warehouse_as_it_was(server, tmp_path):
    wh = tmp_path / "wh.duckdb"
    res = CliRunner().invoke(main, ["ingest", str(write_exporter_text(tmp_path / "october.prom")), "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    before = snapshot(wh)
    # September's two hours fit the server's limit and load; October's first day, planned under
    # a budget ten times the server's, is refused: the pull takes September's chunk back out
    res = CliRunner().invoke(main, ["ingest", "--prometheus", server, "--from", "2026-09-30T22:00:00Z", "--to", "2026-10-01T06:00:00Z",
                                    "--warehouse", str(wh), "--max-samples", str(SERVER_MAX_SAMPLES * 10),
                                    "--config", str(config(tmp_path))])
    assert res.exit_code == 1
    errors = [line for line in res.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "HTTP 422" in errors[0] and "--max-samples" in errors[0], res.stderr
    assert "1 rolled back" in res.stdout, res.stdout
    assert snapshot(wh) == before


def test_a_refused_login_is_one_error_line_and_no_warehouse(tmp_path):
    # bcrypt of a password the test never sends (exporter-toolkit's web-configuration example)
    web = tmp_path / "web.yml"
    web.write_text("basic_auth_users:\n  alice: $2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze\n")
    proc, url = start_server(tmp_path, f"--web.config.file={web}")
    try:
        wh = tmp_path / "wh.duckdb"
        code, out, err = pull(wh, url)
    finally:
        proc.terminate()
        proc.wait(10)
    assert code == 1
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "HTTP 401" in errors[0] and "MB_PROMETHEUS_TOKEN" in errors[0], err
    assert not wh.exists()
