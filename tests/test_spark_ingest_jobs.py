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
from tests.test_spark_telemetry_limits import past_limits
from tests.test_telemetry_plausibility import as_h100, h100

# Each file and the most Spark jobs its whole ingest may run (staging, counts, findings, writes,
# commit) on the test session (AQE off); it ran 24, 28 and 21 before.
MAX_JOBS = {DATA / "aws_cur" / "cur_eks_split_sum_short_of_parent.csv": 14,
            DATA / "focus" / "focus_1.2_invisible_team_tags.csv": 16,
            SAMPLES / "billing" / "focus-1.0__focus-sample-data__focus_sample.csv": 14}
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
