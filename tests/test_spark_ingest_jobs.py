"""A billing or telemetry file's Spark ingest runs a bounded number of Spark jobs, with the
figures DuckDB records. Most of a small file's ingest on Spark is what each job costs whatever its rows
(scheduling, planning, compiling its code); a 500k-line CUR's findings were 23 jobs, one scan
of the lines per kind of finding. The findings now check a line in one pass, the catalog and the
line checks run in the pass that stages the rows, and one pass over them finds the file's
currencies, delivery keys, tag values and the rows of each part of the scan. A file without
rejects keeps none (every anti join to them folds away), its findings are computed once, and a
telemetry file's reference tables are inline, its counts and limit check one job."""
from __future__ import annotations

import json

import pytest

from pipelines.config import Config
from pipelines.spark.ingest import ingest
from pipelines.spark.storage import SparkStore
from tests.conftest import DATA, SAMPLES, ingest_json
from tests.telemetry_fixtures import write_prom_text
from tests.test_cur_lineage import write_cur
from tests.test_spark_telemetry_limits import past_limits
from tests.test_telemetry_plausibility import as_h100, h100

# Each file and the most Spark jobs its whole ingest may run (staging, counts, findings, writes,
# commit) on the test session (AQE off); it ran 24, 28 and 21, then 14, 16 and 14 while the
# findings, rejects and row notes still looked for what the file has none of.
MAX_JOBS = {DATA / "aws_cur" / "cur_eks_split_sum_short_of_parent.csv": 12,
            DATA / "focus" / "focus_1.2_invisible_team_tags.csv": 15,
            SAMPLES / "billing" / "focus-1.0__focus-sample-data__focus_sample.csv": 13}
# dcgm-exporter text: a clean file, and one with readings past their limits (located rejects,
# grouped again without them); they ran 29 and 39 before
MAX_TELEMETRY_JOBS = {"clean.prom": 20, "past_limits.prom": 36}


def spark_jobs(spark, store: SparkStore, path, tmp_path):
    """A file's result of its Spark ingest, and the Spark jobs it ran."""
    sc = spark.sparkContext
    group = f"ingest-{tmp_path.name}-{path.name}"
    sc.setJobGroup(group, "one file's ingest")
    try:
        (res,) = ingest(spark, store, [path], config=Config())
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return res, len(sc.statusTracker().getJobIdsForGroup(group))


@pytest.mark.parametrize("path", list(MAX_JOBS), ids=lambda p: p.name)
def test_a_billing_ingest_runs_few_spark_jobs_and_records_duckdbs_totals(spark, tmp_path, path):
    if not path.exists():
        pytest.skip(f"{path} not present (run with ../shared beside the checkout)")
    duck = ingest_json(tmp_path / "wh.duckdb", path)["files"][0]
    res, jobs = spark_jobs(spark, SparkStore(spark, str(tmp_path / "spark-warehouse")), path, tmp_path)
    assert (res.rows_read, res.rows_loaded, res.rows_rejected) == (duck["rows_read"], duck["rows_loaded"], duck["rows_rejected"])
    assert json.loads(json.dumps(res.totals)) == duck["totals"]
    assert duck["totals"].get("findings"), "a file without findings would prove nothing of them"
    assert jobs <= MAX_JOBS[path], f"{jobs} Spark jobs for one small file"



@pytest.mark.parametrize("name", list(MAX_TELEMETRY_JOBS))
def test_a_telemetry_ingest_runs_few_spark_jobs_and_records_duckdbs_totals(spark, tmp_path, name):
    path = tmp_path / name
    if name == "clean.prom":
        as_h100(write_prom_text(path, [h100([600.0] * 40)]))
    else:
        past_limits(path)
    duck = ingest_json(tmp_path / "wh.duckdb", path)["files"][0]
    res, jobs = spark_jobs(spark, SparkStore(spark, str(tmp_path / "spark-warehouse")), path, tmp_path)
    assert (res.rows_read, res.rows_loaded, res.rows_rejected) == (duck["rows_read"], duck["rows_loaded"], duck["rows_rejected"])
    assert json.loads(json.dumps(res.totals)) == duck["totals"]
    assert jobs <= MAX_TELEMETRY_JOBS[name], f"{jobs} Spark jobs for one small file"


def findings_plan(spark, store: SparkStore, path, monkeypatch) -> tuple:
    """A file's Spark ingest, and the physical plan of its findings query (one row per kind)."""
    from pipelines.spark import readers
    plans = []

    def collected(spark_, findings):
        plans.append(findings._jdf.queryExecution().executedPlan().toString())
        return real(spark_, findings)

    real = readers.collected
    monkeypatch.setattr(readers, "collected", collected)
    (res,) = ingest(spark, store, [path], config=Config())
    return res, plans[0]


def test_a_clean_curs_findings_read_its_staged_lines_twice(spark, tmp_path, monkeypatch):
    """No repeated key, no split row, no row with an error or a note (the norm): the duplicate-key
    check, the split checks and the row notes find nothing without scanning the lines (eleven
    scans before), leaving the line checks and the tag values."""
    path = tmp_path / "cur_clean.csv"
    write_cur(path, set(), None)
    res, plan = findings_plan(spark, SparkStore(spark, str(tmp_path / "spark-warehouse")), path, monkeypatch)
    duck = ingest_json(tmp_path / "wh.duckdb", path)["files"][0]
    assert json.loads(json.dumps(res.totals)) == duck["totals"]
    assert plan.count("Scan ExistingRDD") <= 2, plan


@pytest.mark.parametrize(("bad", "repeat"), [({7}, None), (set(), (3, 1500)), ({1500}, (3, 1500)), ({9, 11}, (4, 1200))],
                         ids=["a_bad_row", "a_repeated_line_item", "the_repeat_rejected", "both"])
def test_the_passes_left_out_of_a_clean_cur_still_find_what_duckdb_finds(spark, tmp_path, bad, repeat):
    path = tmp_path / "cur.csv"
    write_cur(path, bad, repeat)
    duck = ingest_json(tmp_path / "wh.duckdb", path)["files"][0]
    (res,) = ingest(spark, SparkStore(spark, str(tmp_path / "spark-warehouse")), [path], config=Config())
    assert (res.rows_read, res.rows_loaded, res.rows_rejected) == (duck["rows_read"], duck["rows_loaded"], duck["rows_rejected"])
    assert json.loads(json.dumps(res.totals)) == duck["totals"]
    assert ("duplicate_line_item" in duck["totals"]["findings"]) == (repeat is not None and repeat[1] not in bad)
