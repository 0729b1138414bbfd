"""A billing file's Spark ingest runs a bounded number of Spark jobs, with the figures DuckDB
records. Most of a small file's ingest on Spark is what each job costs whatever its rows
(scheduling, planning, compiling its code); a 500k-line CUR's findings were 23 jobs, one scan
of the lines per kind of finding. The findings now check a line in one pass, the catalog and the
line checks run in the pass that stages the rows, and one pass over them finds the file's
currencies, delivery keys, tag values and the rows of each part of the scan."""
from __future__ import annotations

import json

import pytest

from pipelines.config import Config
from pipelines.spark.ingest import ingest
from pipelines.spark.storage import SparkStore
from tests.conftest import DATA, SAMPLES, ingest_json

# Each file and the most Spark jobs its whole ingest may run (staging, counts, findings, writes,
# commit) on the test session (AQE off); it ran 29, 33 and 26 before.
MAX_JOBS = {DATA / "aws_cur" / "cur_eks_split_sum_short_of_parent.csv": 25,
            DATA / "focus" / "focus_1.2_invisible_team_tags.csv": 29,
            SAMPLES / "billing" / "focus-1.0__focus-sample-data__focus_sample.csv": 22}


@pytest.mark.parametrize("path", list(MAX_JOBS), ids=lambda p: p.name)
def test_a_billing_ingest_runs_few_spark_jobs_and_records_duckdbs_totals(spark, tmp_path, path):
    if not path.exists():
        pytest.skip(f"{path} not present (run with ../shared beside the checkout)")
    duck = ingest_json(tmp_path / "wh.duckdb", path)["files"][0]
    store = SparkStore(spark, str(tmp_path / "spark-warehouse"))
    sc = spark.sparkContext
    group = f"ingest-{tmp_path.name}"
    sc.setJobGroup(group, "one billing file's ingest")
    try:
        (res,) = ingest(spark, store, [path], config=Config())
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    jobs = len(sc.statusTracker().getJobIdsForGroup(group))
    assert (res.rows_read, res.rows_loaded, res.rows_rejected) == (duck["rows_read"], duck["rows_loaded"], duck["rows_rejected"])
    assert json.loads(json.dumps(res.totals)) == duck["totals"]
    assert duck["totals"].get("findings"), "a file without findings would prove nothing of them"
    assert jobs <= MAX_JOBS[path], f"{jobs} Spark jobs for one small file"

