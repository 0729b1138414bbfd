"""A model over inputs Spark's optimizer knows are empty (a table nothing was ingested into, a
stage that stored no rows) takes no checkpoint and folds away: a month of billing alone builds
the telemetry and cluster chains for nothing otherwise, each CTE used twice checkpointed, each
stage written and read back. What such a model returns is what the Parquet round trip gave: no
rows, the same columns and types, nullable; and a query that makes a row of nothing (a count)
still makes it."""
from __future__ import annotations

import pytest

from pipelines.spark.build import run_model
from pipelines.spark.storage import SparkStore, known_empty

# gpu_hours is used twice: a checkpoint, where its rows are not known to be none
TWICE = """with hours as (select gpu_uuid, host from gpu_hour_parts)
select a.gpu_uuid, b.host from hours a join hours b on a.gpu_uuid = b.gpu_uuid"""


@pytest.fixture
def store(spark, tmp_path):
    store = SparkStore(spark, str(tmp_path / "spark-warehouse"))
    store.register_inputs()   # nothing ingested: every fact table empty
    return store


def test_a_model_over_a_table_nothing_was_ingested_into_takes_no_checkpoint(spark, store, monkeypatch):
    frame = type(spark.range(0))   # the session's DataFrame class (pyspark's classic one)
    taken = []
    real = frame.localCheckpoint
    monkeypatch.setattr(frame, "localCheckpoint", lambda df, *a, **k: taken.append(df) or real(df, *a, **k))
    df = run_model(spark, TWICE, {}, "_empty_twice")
    assert taken == []
    assert known_empty(df) and df.columns == ["gpu_uuid", "host"]
    run_model(spark, TWICE.replace("from gpu_hour_parts", "from (select distinct 'g' as gpu_uuid, 'h' as host)"), {}, "_one_twice")
    assert len(taken) == 1   # rows not known to be none (and a shuffle to repeat): checkpointed as before


def test_an_empty_stage_reads_back_as_parquet_gives_it(spark, store):
    empty = spark.sql("select gpu_uuid, 1 as n from gpu_hour_parts")
    stored = store.write_stage("empty_stage", empty)
    from_parquet = spark.read.parquet(store.path("build", "empty_stage"))
    assert known_empty(stored) and stored.collect() == []
    assert stored.schema == from_parquet.schema   # n not null in the query; nullable as read back
    # a whole-table aggregate over no rows is one row, as over the Parquet
    assert stored.selectExpr("count(*) as rows").collect() == from_parquet.selectExpr("count(*) as rows").collect()


def test_a_stage_with_rows_is_read_from_parquet(spark, store):
    stored = store.write_stage("one_row", spark.sql("select 'g' as gpu_uuid"))
    assert not known_empty(stored)
    assert stored.inputFiles() and [r.gpu_uuid for r in stored.collect()] == ["g"]


def test_an_empty_mart_is_written_and_reads_back_empty(spark, store):
    stored = store.write_mart("empty_mart", spark.sql("select gpu_uuid, '2026-10' as month from gpu_hour_parts"))
    assert known_empty(stored) and stored.columns == ["gpu_uuid", "month"]
    assert store.exists("marts", "empty_mart")
