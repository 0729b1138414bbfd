"""The Spark SQL text the driver writes, without Spark: each model translated in place on copies
it owns (pipelines.spark.dialect, steps), and inline tables written without a sqlglot generator
per value (storage.inline_values), give the text they gave before those savings."""
from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from core.sql import read_sql
from pipelines.config import Config
from pipelines.models import sql_reads
from pipelines.spark.dialect import DIALECT, spark_tree
from pipelines.spark.steps import cte_steps, step_sql
from pipelines.spark.storage import inline_values
from pipelines.stage_inputs import config_variables

# Spark DDL types the inline tables use (config, reference data, the ledger: storage.spark_type)
TYPES = ["string", "double", "timestamp", "int", "bigint", "boolean", "decimal(38, 12)", "decimal(38,0)", "timestamp_ntz", "date",
         "array<string>", "array<bigint>", "map<string,string>"]
VALUES = [None, True, False, 0, -7, 2**62, 0.0, -0.0, 0.1, 1e300, -2.5e-308, float("inf"), float("-inf"), float("nan"),
          Decimal("12.345678901234"), Decimal("-0"), "", "plain", "it's", "back\\slash", "line\nbreak", "tab\there",
          "unicode Ω ✓", "'; drop table t; --", datetime(2026, 10, 1, 10, 30, 5, 250), date(2026, 2, 28), ["a", "b"], []]


def per_value(t: str, v) -> str:
    """What local_frame wrote for one value before inline_values: a generator per value."""
    return exp.cast(exp.convert(v), t).sql(dialect=DIALECT)


@pytest.mark.parametrize("t", TYPES)
def test_an_inline_value_is_the_cast_sqlglot_writes(t):
    for v in VALUES:
        assert inline_values([t], [(v,)]) == f"({per_value(t, v)})", (t, v)


@given(st.lists(st.tuples(st.one_of(st.none(), st.text()), st.one_of(st.none(), st.floats(), st.integers(-2**63, 2**63 - 1))),
                min_size=1, max_size=5))
def test_inline_rows_are_the_casts_sqlglot_writes(rows):
    want = ", ".join(f"({per_value('string', a)}, {per_value('double', b)})" for a, b in rows)
    assert inline_values(["string", "double"], rows) == want


# models with macros, CTEs read several times, UNNEST joins, DISTINCT ON; none needs the engine's columns
MODELS = [("20_intermediate", "int_gpu_shares"), ("20_intermediate", "int_market_claims"), ("20_intermediate", "int_cost_pool"),
          ("30_marts", "team_day")]


@pytest.mark.parametrize("folder, name", MODELS)
def test_a_model_translates_to_the_same_text_every_time(folder, name):
    """The translation works in place on trees it owns: spark_tree's cached tree is left as it
    was, so translating a model again (the ingest does, once per file) gives the same text."""
    sql, variables = read_sql(folder, f"{name}.sql"), config_variables(Config())
    first = cte_steps(sql, variables, f"_{name}")
    texts = [step_sql(tree) for _, tree, _ in first]
    again = cte_steps(sql, variables, f"_{name}")
    assert [(v, step_sql(tree), refs) for v, tree, refs in again] == [(v, t, refs) for (v, _, refs), t in zip(first, texts)]
    assert spark_tree(sql, variables).sql(dialect=DIALECT) == spark_tree(sql, variables).sql(dialect=DIALECT)


def test_a_model_is_parsed_once_for_its_reads_and_its_spark_sql(monkeypatch):
    """The build order (sql_reads, at import) and the Spark translation share one parse of a model."""
    real, texts = sqlglot.parse_one, []
    monkeypatch.setattr(sqlglot, "parse_one", lambda sql, **kw: texts.append(sql) or real(sql, **kw))
    sql = read_sql("20_intermediate", "int_gpu_shares.sql") + "\n-- a text no other test has parsed\n"
    sql_reads(sql)
    spark_tree(sql, config_variables(Config()))
    assert texts.count(sql) == 1
