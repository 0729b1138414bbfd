"""The build step on Spark: the same models as pipelines.stages, each after the models it reads (several at once), each SQL model transpiled from
DuckDB's dialect at run time (pipelines.spark.dialect), over the Spark warehouse's tables.

Config and reference data reach Spark as data: cfg_* and ref_* temp views built from Python rows
and the reference CSVs, the scalar settings as literals rendered by the dialect shim. The one
Python stage (scaling fits, a few rows per month from CodeCarbon runs) runs on the driver with
the same function as on one machine, over the small inputs it reads.
"""
from __future__ import annotations

import re
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, Callable

import duckdb

from core.sql import read_sql
from pipelines.config import Config
from pipelines.models import PYTHON, Model, ModelGraphError
from pipelines.progress import BuildProgress, ticking
from pipelines.scaling import scaling_fits_table
from pipelines.spark.steps import cte_steps, step_sql
from pipelines.spark.storage import counted_checkpoint, local_view
from pipelines.stage_inputs import config_tables, config_variables
from pipelines.stages import MARTS, PYTHON_MODELS, UNDATED_MARTS, stages
from sources.reference_data import load_reference

# DuckDB type names of config_tables -> Spark DDL
SPARK_TYPES = {"varchar": "string", "integer": "int", "double": "double", "bigint": "bigint",
               "decimal(38, 12)": "decimal(38, 12)"}


def register_config(spark, config: Config) -> None:
    for name, (columns, rows, types) in config_tables(config).items():
        local_view(spark, name, [(c, SPARK_TYPES[t]) for c, t in zip(columns, types)], rows)


def reference_tables() -> dict[str, Any]:
    """The ref_* tables as Arrow, read by the same loader as on one machine."""
    con = duckdb.connect()
    load_reference(con)
    names = [r[0] for r in con.execute("select table_name from duckdb_tables() where table_name like 'ref_%'").fetchall()]
    return {n: con.sql(f"select * from {n}").to_arrow_table() for n in names}


def register_reference(spark) -> None:
    from pyspark.sql.pandas.types import from_arrow_schema
    for name, table in reference_tables().items():
        fields = from_arrow_schema(table.schema).fields
        local_view(spark, name, [(f.name, f.dataType.simpleString()) for f in fields], [tuple(r.values()) for r in table.to_pylist()])


def scaling_fits(spark):
    """int_scaling_fits from the few rows it needs, on a driver-side DuckDB: the runs (CodeCarbon,
    small), the GPU price per month and model (an aggregate), the assumptions."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.register("run_month", spark.table("run_month").toArrow())
    prices = spark.sql("select month, gpu_model, effective_cost, gpu_hours from int_charges_teams where gpu_hours > 0")
    con.register("int_charges_teams", prices.groupBy("month", "gpu_model").sum("effective_cost", "gpu_hours")
                 .withColumnsRenamed({"sum(effective_cost)": "effective_cost", "sum(gpu_hours)": "gpu_hours"}).toArrow())
    con.register("ref_assumptions", spark.table("ref_assumptions").toArrow())
    con.register("fits", scaling_fits_table(con))
    # through Arrow, so an empty result keeps its typed columns
    return spark.createDataFrame(con.sql("select * from fits").to_arrow_table())


def python_model(spark, name: str):
    """A Python-built model (pipelines.stages.PYTHON_MODELS) on a driver-side DuckDB holding the
    tables it reads (all small: a month's teams and their energy lines, the tag values outside ASCII)."""
    build, reads = PYTHON_MODELS[name]
    con = duckdb.connect()
    for table in sorted(reads):
        con.register(table, spark.table(table).toArrow())
    con.register("mart", build(con))
    return spark.createDataFrame(con.sql("select * from mart").to_arrow_table())


def run_model(spark, sql: str, variables: dict, prefix: str,
              keep: Callable[[Any], Any] = counted_checkpoint) -> Any:
    """A model as steps (dialect.cte_steps): each CTE a temp view, and those used more than once
    computed once by `keep(df)` into a frame whose plan starts there. Caching is not
    enough: Spark analyses a view's whole definition wherever it is used, so a chain whose CTEs
    are used many times (int_alloc_targets) grows, if only in analysis, to more than the
    driver's heap. The default keep is a local checkpoint (storage.counted_checkpoint, executors'
    disks; one found empty or small is an empty relation or broadcast):
    a model's CTEs live as long as its run; what outlives it, the model's result, is written to
    the warehouse by the caller. (Parquet for every such CTE cost a third more of the build.)"""
    steps = cte_steps(sql, variables, prefix)
    for view, tree, refs in steps[:-1]:
        df = spark.sql(step_sql(tree, columns_of(spark)))
        if refs > 1 and not narrow(df):
            df = keep(df)
        df.createOrReplaceTempView(view)
    return spark.sql(step_sql(steps[-1][1], columns_of(spark)))


# Operators whose work a second reader of a CTE would repeat: a shuffle, a join, a sort, a
# window, rows multiplied. A CTE without them (columns computed row by row over stored tables or
# kept CTEs, a filter, a union) is cheaper to compute again than to write to disk and read twice.
WIDE = frozenset({"Aggregate", "Join", "Window", "Sort", "Generate", "Expand", "Distinct", "Deduplicate",
                  "Intersect", "Except", "Repartition", "RepartitionByExpression", "WindowGroupLimit", "Sample"})
# ...and no more operators than this: each reader analyses the whole plan again
NARROW_PLAN_NODES = 40
PLAN_NODE = re.compile(r"^[\s:|+-]*([A-Za-z]+)", re.MULTILINE)


def narrow(df) -> bool:
    """A step worth computing again where it is read rather than keeping (WIDE): its analysed plan
    (views it reads expanded, up to a kept CTE or a stored table) is short and has no wide
    operator. Nothing runs: spark.sql has analysed it already."""
    nodes = PLAN_NODE.findall(df._jdf.queryExecution().analyzed().treeString())
    return len(nodes) <= NARROW_PLAN_NODES and not WIDE.intersection(nodes)


def columns_of(spark) -> Callable[[str], list[str]]:
    """A query's column names as Spark analyses it (nothing runs): the dialect's Columns."""
    return lambda text: spark.sql(text).columns


def run_stages(spark, config: Config, materialize: Callable[[str, str, object], None],
               keep: Callable[[Any], Any] = counted_checkpoint, workers: int | None = None,
               progress: BuildProgress | None = None) -> None:
    """Every stage after the stages it reads; `materialize(folder, name, df)` stores a result and
    makes it the view of that name for the stages after it; `keep` stores a CTE used more than
    once (run_model). `workers` models run at once (default: the session's parallelism, at most
    MAX_WORKERS). Every TICK_S seconds a line on stderr names the models running; `progress`
    (optional) keeps each model's seconds."""
    register_reference(spark)
    register_config(spark, config)
    variables = config_variables(config)
    order = stages()
    progress = progress or BuildProgress()
    progress.total = len(order)

    def run(model: Model) -> None:
        with progress.model(model.name):
            if model.name in UNDATED_MARTS:   # built by engine.publish, on the DuckDB side
                return
            if model.name == "int_scaling_fits":   # reads a large table: reduced in Spark first
                materialize(model.folder, model.name, scaling_fits(spark))
            elif model.folder == PYTHON:
                materialize("30_marts" if model.name in MARTS else model.folder, model.name, python_model(spark, model.name))
            else:
                sql = read_sql(model.folder, model.name + ".sql")
                materialize(model.folder, model.name, run_model(spark, sql, variables, f"_{model.name}", keep))

    with ticking("build", progress.status):
        run_graph(order, run, workers or min(MAX_WORKERS, spark.sparkContext.defaultParallelism))


# Models built at once. Each query is analysed and planned on one driver thread, and a small one
# runs its tasks in less time than that: while one model is planned, another's tasks use the cores.
MAX_WORKERS = 4


def run_graph(models: list[Model], run: Callable[[Model], None], workers: int) -> None:
    """run(model) for each model once every model it reads is done, up to `workers` at a time,
    in build order among the ready ones. The first failure stops the scheduling and is raised
    once the models already running finish."""
    names = {m.name for m in models}
    needs = {m.name: {r for r in m.reads if r in names and r != m.name} for m in models}
    pending = list(models)
    done: set[str] = set()
    running: dict[Any, Model] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        while pending or running:
            for model in [m for m in pending if needs[m.name] <= done][:max(1, workers) - len(running)]:
                pending.remove(model)
                running[pool.submit(run, model)] = model
            if not running:
                raise ModelGraphError("models wait on each other: " + ", ".join(m.name for m in pending))
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                model = running.pop(future)
                future.result()
                done.add(model.name)
