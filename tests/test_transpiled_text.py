"""The Spark SQL text the driver writes, without Spark: each model translated in place on copies
it owns (pipelines.spark.dialect, steps) gives the text it gave before that saving."""
from __future__ import annotations

import pytest

from core.sql import read_sql
from pipelines.config import Config
from pipelines.spark.dialect import DIALECT, spark_tree
from pipelines.spark.steps import cte_steps, step_sql
from pipelines.stage_inputs import config_variables

# models with macros, CTEs read several times, UNNEST joins, DISTINCT ON; none needs the engine's columns
MODELS = [("20_intermediate", "int_gpu_shares"), ("20_intermediate", "int_market_claims"), ("20_intermediate", "int_cost_pool"),
          ("30_marts", "team_day")]


@pytest.mark.parametrize("folder, name", MODELS)
def test_a_model_translates_to_the_same_text_every_time(folder, name):
    """The translation works in place on trees it owns: spark_tree's cached tree and a step's
    tree are left as they were, so translating a model again (the ingest does, once per file)
    or writing a step's text twice gives the same text."""
    sql, variables = read_sql(folder, f"{name}.sql"), config_variables(Config())
    first = cte_steps(sql, variables, f"_{name}")
    texts = [step_sql(tree) for _, tree, _ in first]
    assert [step_sql(tree) for _, tree, _ in first] == texts
    again = cte_steps(sql, variables, f"_{name}")
    assert [(v, step_sql(tree), refs) for v, tree, refs in again] == [(v, t, refs) for (v, _, refs), t in zip(first, texts)]
    assert spark_tree(sql, variables).sql(dialect=DIALECT) == spark_tree(sql, variables).sql(dialect=DIALECT)
