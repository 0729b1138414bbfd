"""The work log input (kind work): detected in CSV and JSON lines, rows checked with located
rejects, structural problems as one Error: line, and the README's example loads as written."""
from __future__ import annotations

import re

import duckdb

from tests.conftest import DATA, ROOT, ingest_json, run_cli

WORK = DATA / "work"


def test_csv_and_json_lines_are_detected_and_loaded(warehouse):
    files = ingest_json(warehouse, WORK / "work_log_dense_and_moe.csv", WORK / "work_log_serving.jsonl")["files"]
    assert [(f["kind"], f["format_version"], f["rows_loaded"], f["rows_rejected"]) for f in files] == [
        ("work", "csv", 2, 0), ("work", "jsonl", 2, 0)]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = dict(con.execute("select job_id, (workload, gpu_uuids, active_params) from work_log").fetchall())
    assert rows["moe-8x1b"] == ("training", ["GPU-b0", "GPU-b1"], 1.5e9)
    assert rows["bare"][1] == ["GPU-b0", "GPU-b1"]          # a JSON array of UUIDs
    assert rows["ranker"][0] == "serving"                    # 'inference' is serving


def test_bad_rows_are_located_rejects_and_the_rest_loads(warehouse):
    (f,) = ingest_json(warehouse, WORK / "work_log_bad_rows.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (8, 1, 7)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        found = con.execute("select row_number, column_name, check_name from rejects order by row_number").fetchall()
    assert [(r, c) for r, c, _ in found] == [(2, "end_utc"), (3, "namespace"), (4, "tokens"), (5, "active_params"),
                                              (6, "precision"), (7, "job_id"), (8, "tokens")]
    assert [k for *_, k in found][:5] == ["end_after_start", "has_placement", "has_units_of_work",
                                          "active_params_at_most_params", "isin(['fp32', 'tf32', 'bf16', 'fp16', 'fp8'])"]


def test_a_work_log_missing_a_required_column_stops_with_one_line(tmp_path):
    no_workload = tmp_path / "no_workload.csv"
    no_workload.write_text("job_id,namespace,start_utc,end_utc,tokens\nj,ns,2026-10-01,2026-10-02,1\n")
    code, out, err = run_cli("ingest", str(no_workload), "--kind", "work", "--warehouse", str(tmp_path / "wh.duckdb"))
    assert code == 1 and err.startswith("Error: ") and "missing required column workload" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_docs_example_loads_as_written(tmp_path):
    section = (ROOT / "docs" / "work-logs.md").read_text(encoding="utf-8")
    example = re.search(r"```\n(job_id,.*?)```", section, flags=re.S).group(1)
    path = tmp_path / "work.csv"
    path.write_text(example, encoding="utf-8")
    (f,) = ingest_json(tmp_path / "wh.duckdb", path)["files"]
    assert (f["kind"], f["rows_read"], f["rows_rejected"]) == ("work", 3, 0)


def test_the_cli_knows_the_kind():
    from pipelines.cli import KINDS
    from sources import REGISTRY
    assert "work" in KINDS and "work" in REGISTRY
