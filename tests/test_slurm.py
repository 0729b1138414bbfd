"""Slurm accounting (sacct --parsable2): jobs, steps counted once, located rejects, the layouts
refused with their fix; and the owned cluster's cost pool through the chargeback."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
from click.testing import CliRunner

from pipelines.cli import main

DATA = Path(__file__).parent / "data" / "slurm"


def ingest(warehouse: Path, *args: str | Path) -> tuple[int, dict, str]:
    res = CliRunner().invoke(main, ["ingest", *map(str, args), "--warehouse", str(warehouse), "--json"])
    out = res.stdout
    files = json.loads(out[:out.rindex("}") + 1])["files"] if "{" in out else [{}]
    return res.exit_code, files[0], res.output


def query(warehouse: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_jobs_load_with_their_gpus_and_steps_add_no_gpu_time(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, DATA / "sacct_month.txt")
    assert code == 0 and f["kind"] == "slurm" and f["status"] == "loaded", out
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (7, 7, 0)
    # 1001: 8 GPUs x 10 h (its .batch and .0 steps run inside it); 1002_3: 2 x 2 h; 1003+0: 2 x 1 h;
    # the CPU job and the pending one hold no GPU time
    assert f["totals"] == {"jobs": 5, "steps": 2, "gpu_hours": 86.0}
    rows = dict((r[0], r[1:]) for r in query(wh, "select job_id, job_key, is_step, gpus, gpu_type, state from slurm_jobs"))
    assert rows["1001.0"] == ("1001", True, 8.0, "h100", "COMPLETED")
    # typed count only (gres/gpu:h100=2); "CANCELLED by 1234" is CANCELLED
    assert rows["1002_3"] == ("1002_3", False, 2.0, "h100", "CANCELLED")
    assert rows["1003+0"][:3] == ("1003+0", False, 2.0)
    assert query(wh, "select start_utc, end_utc from slurm_jobs where job_id = '1005'") == [(None, None)]


def test_row_problems_are_located_rejects(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, DATA / "sacct_bad_rows.txt")
    assert code == 0 and f["rows_read"] == f["rows_loaded"] + f["rows_rejected"] == 7, out
    checks = {(r, c) for r, c in query(wh, "select row_number, check_name from rejects")}
    assert checks == {(2, "field_count"), (3, "timestamp"), (4, "end_after_start"), (5, "gpu_count"),
                      (6, "one_row_per_job")}
    # a running job ends at Start + ElapsedRaw
    assert query(wh, "select gpus, gpu_type, end_utc::varchar from slurm_jobs where job_id = '2006'") == \
        [(2.0, "a100", "2026-10-06 00:30:00")]


def test_noheader_export_in_the_documented_order(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, DATA / "sacct_noheader.txt")
    assert code == 0 and f["format_version"] == "parsable2-noheader", out
    assert f["totals"] == {"jobs": 1, "steps": 1, "gpu_hours": 8.0}
    assert query(wh, "select consumed_energy_j from slurm_jobs where is_step") == [(1800000.0,)]


def test_times_in_the_clusters_zone(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, DATA / "sacct_noheader.txt", "--timezone", "Europe/Paris")
    assert code == 0 and f["notes"] == [], out
    assert query(wh, "select start_utc::varchar from slurm_jobs where job_id = '3001'") == [("2026-10-06 22:00:00",)]


def test_fixed_width_table_is_refused_with_the_fix(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, _, out = ingest(wh, DATA / "sacct_fixed_width.txt")
    assert code == 1
    assert "fixed-width" in out and "--parsable2" in out and "Traceback" not in out
