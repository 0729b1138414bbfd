"""Prometheus text read to the exposition format's rules (Prometheus text format 0.0.4 and
OpenMetrics 1.0): escaped label values, NaN and infinities, exemplars, `# EOF`; and sample
times no clock can write."""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from pipelines.config import Config
from pipelines.quality import quality_summary
from pipelines.stages import run_stages
from pipelines.warehouse import connect
from reports.chargeback import build_context, report_html
from tests.conftest import ingest_json
from tests.telemetry_fixtures import Trace, write_long_csv, write_prom_text, write_query_range
from tests.telemetry_fixtures import located_rejects as rejects

START = datetime(2026, 10, 6, 0, 0, 10)
INTERVAL = 30
# namespace `team"x\y<newline>z` as the exposition format writes it
ESCAPED = r'namespace="team\"x\\y\nz",pod="p\\1"'
NAMESPACE = 'team"x\\y\nz'


def trace(hours: float = 1, labels: str = "", **kw) -> Trace:
    n = int(hours * 3600 / INTERVAL)
    return Trace(uuid="GPU-11111111-2222-3333-4444-555555555555", start=START, interval_s=INTERVAL,
                 power_w=[300.0] * n, extra_labels=labels, **kw)


def append(path: Path, *lines: str) -> int:
    """Append sample lines; the line number of the first."""
    old = path.read_text().splitlines()
    path.write_text("\n".join([*old, *lines]) + "\n")
    return len(old) + 1


def test_escaped_label_values_reach_their_namespaces_team(tmp_path):
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, write_prom_text(tmp_path / "esc.prom", [trace(labels="," + ESCAPED)]))
    con = connect(wh)
    run_stages(con, Config(interval_s=INTERVAL, namespace_teams={NAMESPACE: "research"}))
    assert con.execute("select distinct namespace, pod from gpu_pod_parts").fetchall() == [(NAMESPACE, "p\\1")]
    assert con.execute("select team, namespace from workload_month").fetchall() == [("research", NAMESPACE)]
    con.close()


def test_label_cells_of_a_long_csv_and_a_query_range_keep_their_quotes_and_backslashes(tmp_path):
    """The other readers rebuild label text from cells: a quote or backslash in a cell is written
    escaped, so the one label parser gives the cell back."""
    for name, writer in (("e.csv", write_long_csv), ("q.json", write_query_range)):
        wh = tmp_path / f"{name}.duckdb"
        path = writer(tmp_path / name, [trace()])
        # the host cell `node\"a`, as each format writes it
        cell = json.dumps('node\\"a') if name.endswith("json") else '"node\\""a"'
        path.write_text(path.read_text().replace('"node-a"' if name.endswith("json") else "node-a", cell))
        ingest_json(wh, path)
        con = duckdb.connect(str(wh), read_only=True)
        assert con.execute("select distinct host from gpu_hour_parts").fetchall() == [('node\\"a',)], name
        con.close()


def test_nan_and_infinities_are_located_rejects(tmp_path):
    path = write_prom_text(tmp_path / "nan.prom", [trace()])
    labels = trace().labels()
    first = append(path, *(f"DCGM_FI_DEV_POWER_USAGE{{{labels}}} {v} 1791245000000" for v in ("NaN", "+Inf", "-Inf")))
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, path)["files"]
    assert (f["rows_rejected"], f["rows_read"] - f["rows_loaded"]) == (3, 3)
    assert rejects(wh) == [(first, "finite"), (first + 1, "finite"), (first + 2, "finite")]


def test_exemplars_and_eof_are_read_as_openmetrics_writes_them(tmp_path):
    path = write_prom_text(tmp_path / "om.prom", [trace(hours=0.25)])
    labels = trace().labels()
    append(path,
           f'DCGM_FI_DEV_POWER_USAGE{{{labels}}} 310 1791245000000 # {{trace_id="KOO5S4vxi0o"}} 0.67',
           f'DCGM_FI_DEV_POWER_USAGE{{{labels}}} 320 1791245030000 # {{trace_id="oHg5SJYRHA0",span="a}}b"}} 9 1791245030.1',
           "# EOF")
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, path)["files"]
    assert (f["format_version"], f["rows_rejected"], f["rows_read"], f["rows_loaded"]) == ("openmetrics", 0, f["rows_loaded"], f["rows_read"])
    con = duckdb.connect(str(wh), read_only=True)
    assert con.execute("select max(power_w_max) from gpu_hour_parts").fetchone()[0] == 320
    con.close()


def test_a_time_past_int64_is_a_located_reject_in_every_reader(tmp_path):
    labels = trace().labels()
    path = write_prom_text(tmp_path / "big.prom", [trace(hours=0.25)])
    at = append(path, f"DCGM_FI_DEV_POWER_USAGE{{{labels}}} 300 9223372036854775000")
    (f,) = ingest_json(tmp_path / "p.duckdb", path)["files"]
    assert f["rows_rejected"] == 1 and rejects(tmp_path / "p.duckdb") == [(at, "sample_time")]

    csv = write_long_csv(tmp_path / "big.csv", [trace(hours=0.25)])
    at = append(csv, "9223372036854775000,DCGM_FI_DEV_POWER_USAGE,node-a,GPU-11111111-2222-3333-4444-555555555555,0,"
                     "NVIDIA A100-SXM4-80GB,,,300")
    (f,) = ingest_json(tmp_path / "c.duckdb", csv)["files"]
    assert f["rows_rejected"] == 1 and rejects(tmp_path / "c.duckdb") == [(at - 1, "sample_time")]

    js = write_query_range(tmp_path / "big.json", [trace(hours=0.25)])
    js.write_text(js.read_text().replace('"values": [', '"values": [[9223372036854775000, "300"], ', 1))
    (f,) = ingest_json(tmp_path / "j.duckdb", js)["files"]
    assert f["rows_rejected"] == 1


def test_a_scrape_dated_by_its_files_mtime_is_a_finding_in_the_data_quality_summary(tmp_path):
    labels = trace().labels()
    path = tmp_path / "scrape.prom"
    path.write_text(f"DCGM_FI_DEV_POWER_USAGE{{{labels}}} 250.5\nDCGM_FI_DEV_GPU_UTIL{{{labels}}} 40\n")
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, path)["files"]
    assert any("scrape time from file_mtime" in n for n in f["notes"])
    con = duckdb.connect(str(wh), read_only=True)
    (found,) = quality_summary(con)["row_findings_by_check"]
    con.close()
    assert (found["check_name"], found["first_row"]) == ("scrape_time_from_file_mtime", 1) and "modification time" in found["message"]


def test_a_dmon_log_named_with_a_quote_keeps_it_in_its_host(tmp_path):
    """dmon's host is its file's name, written into the label text the one parser reads."""
    src = Path(__file__).parent / "data" / "dcgm" / "dmon_repeated_headers_with_time_prefix.log"
    path = tmp_path / 'node"7.log'
    path.write_bytes(src.read_bytes())
    ingest_json(tmp_path / "wh.duckdb", path)
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute("select distinct host from gpu_hour_parts").fetchall() == [('node"7',)]
    con.close()


def test_a_scrape_dated_by_its_files_mtime_is_said_in_the_reports_data_quality(tmp_path):
    labels = trace().labels()
    path = tmp_path / "scrape.prom"
    path.write_text(f"DCGM_FI_DEV_POWER_USAGE{{{labels}}} 250.5\n")
    when = datetime(2026, 10, 6, 10, 0, 0, tzinfo=timezone.utc).timestamp()
    os.utime(path, (when, when))
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, path)
    con = connect(wh)
    config = Config(interval_s=INTERVAL)
    run_stages(con, config)
    html = report_html(build_context(con, config, "2026-10"))
    con.close()
    quality = html[html.index("Data quality"):]
    assert "scrape time from file mtime" in quality and "modification time" in quality
