"""How the Spark build plans its joins to config and reference data, and which CTEs it keeps.
The cfg_* and ref_* views are a few hundred rows at most; the config's, made from Python rows,
were RDDs of unknown size, so every join to one sorted and shuffled both sides. As inline
tables Spark knows their size and rows: joins to them are broadcast, and a query over an empty
one (no what-if in the config) folds away. A CTE used twice that only computes columns row by
row is computed again by its second reader rather than written to disk and read back."""
from __future__ import annotations

import pytest

from pipelines.config import Config
from pipelines.spark.build import register_config, register_reference
from pipelines.spark.storage import known_empty


@pytest.fixture
def views(spark):
    register_reference(spark)
    register_config(spark, Config())
    # a large table whose size Spark cannot see either: only the small side may be broadcast
    spark.createDataFrame([(f"gpu-{i}",) for i in range(200)], "gpu_model string").createOrReplaceTempView("_lines")


def executed(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def test_a_join_to_reference_data_is_broadcast(spark, views):
    # made from Arrow, the ref_* views were broadcast before too: kept so that stays true
    plan = executed(spark.sql("select l.gpu_model, s.* from _lines l left join ref_gpu_specs s on s.gpu_model = l.gpu_model"))
    assert "BroadcastHashJoin" in plan and "SortMergeJoin" not in plan


def test_a_join_to_config_is_broadcast(spark, views):
    plan = executed(spark.sql("select l.gpu_model, m.* from _lines l join cfg_minor_units m on m.currency = l.gpu_model"))
    assert "BroadcastHashJoin" in plan and "SortMergeJoin" not in plan


def test_a_query_over_empty_config_folds_away(spark, views):
    assert spark.table("cfg_whatif").count() == 0   # the default config has no what-if
    assert known_empty(spark.sql("select l.gpu_model from _lines l join cfg_whatif w on true"))


def test_the_views_hold_the_same_rows(spark, views):
    from pipelines.spark.build import reference_tables
    expected = reference_tables()["ref_gpu_specs"]
    assert spark.table("ref_gpu_specs").count() == expected.num_rows
    assert spark.table("ref_gpu_specs").columns == expected.column_names


# `lines` used twice; as written, computed row by row from a table (no shuffle, join or sort)
TWICE = """with lines as (select gpu_model, upper(gpu_model) as shown from _lines{}),
a as (select gpu_model from lines where shown like 'GPU-1%'),
b as (select gpu_model from lines where shown like 'GPU-2%')
select count(*) as n from (select * from a union all select * from b)"""


def checkpoints(spark, monkeypatch) -> list:
    frame = type(spark.range(0))
    taken: list = []
    real = frame.localCheckpoint
    monkeypatch.setattr(frame, "localCheckpoint", lambda df, *a, **k: taken.append(df) or real(df, *a, **k))
    return taken


def test_a_cte_used_twice_that_is_computed_row_by_row_is_not_checkpointed(spark, views, monkeypatch):
    from pipelines.spark.build import run_model
    taken = checkpoints(spark, monkeypatch)
    assert run_model(spark, TWICE.format(""), {}, "_narrow").collect()[0].n == 111 + 11
    assert taken == []


def test_a_cte_used_twice_that_aggregates_is_checkpointed(spark, views, monkeypatch):
    from pipelines.spark.build import run_model
    taken = checkpoints(spark, monkeypatch)
    assert run_model(spark, TWICE.format(" group by all"), {}, "_wide").collect()[0].n == 111 + 11
    assert len(taken) == 1
