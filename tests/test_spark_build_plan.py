"""How the Spark build plans its joins to config and reference data, and which CTEs it keeps.
The cfg_* and ref_* views are a few hundred rows at most; the config's, made from Python rows,
were RDDs of unknown size, so every join to one sorted and shuffled both sides. As inline
tables Spark knows their size and rows: joins to them are broadcast, and a query over an empty
one (no what-if in the config) folds away. A CTE used twice that only computes columns row by
row is computed again by its second reader rather than written to disk and read back."""
from __future__ import annotations

import duckdb
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


def duckdbs_rows(spark, sql: str) -> list:
    """The query's rows as DuckDB computes them over the same `_lines`, sorted."""
    con = duckdb.connect()
    con.register("_lines", spark.table("_lines").toArrow())
    return sorted(con.sql(sql).fetchall())


# `groups` is used twice and aggregates (kept), and holds no row: no model has two lines. As in
# focus_allocated, lines of a group with parts are split, the others kept whole.
EMPTY_KEPT = """with groups as (select gpu_model from _lines group by gpu_model having count(*) > 1),
split as (select l.gpu_model, l.gpu_model || '/part' as part from _lines l semi join groups g on g.gpu_model = l.gpu_model),
whole as (select l.gpu_model, l.gpu_model as part from _lines l anti join groups g on g.gpu_model = l.gpu_model)
select * from split union all select * from whole"""


def test_a_kept_cte_found_empty_is_known_empty_to_the_joins_to_it(spark, views, monkeypatch):
    """A checkpoint is a scan of unknown size: joined to it, the other side was shuffled and
    sorted before Spark learnt there was nothing to join. Found empty, it is an empty relation,
    and the joins to it fold away at planning; the rows are DuckDB's."""
    from pipelines.spark.build import run_model
    taken = checkpoints(spark, monkeypatch)
    df = run_model(spark, EMPTY_KEPT, {}, "_empty_kept")
    assert len(taken) == 1   # computed once all the same
    plan = executed(df)
    assert "Join" not in plan and "Exchange" not in plan, plan
    assert sorted(map(tuple, df.collect())) == duckdbs_rows(spark, EMPTY_KEPT)


# `groups` holds a row per model (kept: used twice); none has two lines, which only the joins say
SMALL_KEPT = EMPTY_KEPT.replace("group by gpu_model having count(*) > 1", "group by gpu_model") \
    .replace("l semi join groups g on g.gpu_model = l.gpu_model", "l semi join groups g on g.gpu_model = l.gpu_model and g.n > 1") \
    .replace("l anti join groups g on g.gpu_model = l.gpu_model", "l anti join groups g on g.gpu_model = l.gpu_model and g.n > 1") \
    .replace("select gpu_model from _lines group", "select gpu_model, count(*) as n from _lines group")


def test_a_small_kept_cte_is_broadcast_to_the_joins_to_it(spark, views, monkeypatch):
    """A kept CTE of a few rows (focus_allocated's allocation groups) is broadcast: the other
    side (every line) is neither shuffled nor sorted against it; the rows are DuckDB's."""
    from pipelines.spark.build import run_model
    taken = checkpoints(spark, monkeypatch)
    df = run_model(spark, SMALL_KEPT, {}, "_small_kept")
    assert len(taken) == 1
    plan = executed(df)
    assert "BroadcastHashJoin" in plan and "SortMergeJoin" not in plan, plan
    assert sorted(map(tuple, df.collect())) == duckdbs_rows(spark, SMALL_KEPT)
