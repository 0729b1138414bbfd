"""`--engine spark`: ingest into and build from the Spark warehouse, then publish the marts where
the reports read them, a DuckDB file on one machine (reports never need Spark).

Publishing copies, in one DuckDB transaction: every mart, the lineage tables (source_files,
rejects, findings: read by DuckDB from their Parquet, one small file per file loaded, which
Spark would list and read in jobs that grew with the history), the disclosures and the
reference tables; then the contracts run on the
published marts with the same pandera models and the same function as on one machine
(pipelines.stages.contract_failures), so a failure is located the same way. pandera's own
pyspark backend is not used: it imports pandas-on-Spark, which does not import under pandas 3
(pyspark 4.3), and it reports failures per check, not per row.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import duckdb

from core.sql import literal, one_row
from pipelines import month_scope
from pipelines.config import Config
from pipelines.ingest import FileResult
from pipelines.month_scope import MONTH_EXPR, Scope
from pipelines.progress import BuildProgress
from pipelines.spark import build as spark_build
from pipelines.spark import dialect, steps
from pipelines.spark.build import run_stages
from pipelines.spark.session import spark_session
from pipelines.spark.storage import BY_FILE, FACTS, LINEAGE, InputScope, SparkStore, duck_shapes, local_path, model_month
from pipelines.stage_inputs import apply_config, config_variables
from pipelines.stages import (
    MARTS,
    PYTHON_MODELS,
    UNDATED_MARTS,
    VALIDATED,
    build_model,
    contract_failures,
    month_findings,
    record_findings,
    stages,
)
from pipelines.warehouse import connect, create_tables
from sources.reference_data import load_reference

DEFAULT_SPARK_WAREHOUSE = "build/spark-warehouse"


def open_store(config: Config, warehouse: str | None = None) -> SparkStore:
    spark = spark_session(config.engine.master, config.engine.conf)
    return SparkStore(spark, warehouse or config.engine.warehouse or DEFAULT_SPARK_WAREHOUSE)


def ingest(store: SparkStore, paths: Iterable[str | Path], kind: str, options: dict[str, Any], config: Config) -> list[FileResult]:
    from pipelines.spark.ingest import ingest as run
    return run(store.spark, store, paths, kind, options, config)


def build(store: SparkStore, config: Config, duck_path: Path, progress: BuildProgress | None = None) -> list[str]:
    """The months whose inputs changed (pipelines.month_scope; every month after a change to the
    config, the reference data or the models), on Spark over those months' rows, their marts'
    folders replaced, then published to `duck_path`; returns the months built. `progress`
    (optional) keeps each model's seconds and the scope."""
    from pyspark.sql.functions import expr
    spark = store.spark
    progress = progress or BuildProgress()
    with scope_db(store, config) as con:
        previous = state_sha256(dict(con.execute(f"select * from {month_scope.STATE}").fetchall()))
        # a DuckDB file published from another state (or none) is published whole, from a full build
        current = published_state(duck_path) == (store.root, previous)
        scope = month_scope.plan(con, shared_fingerprint(con, config), SPARK_MODELS, built=lambda m: current and store.exists(
            "marts" if m in MARTS else "build", m))
        inputs = None if scope.full else InputScope(scope.rebuilt, {t: month_scope.files_read(con, t, scope.rebuilt) for t in BY_FILE},
                                                     month_scope.hours_outside(con, scope.rebuilt))
        # the ledger as the driver read it already: no Spark job over every file's lineage partition
        loaded = [r[0] for r in con.execute("select file_id from source_files where status = 'loaded' order by 1").fetchall()]
        ledger = inline_ledger(con)
    progress.scope = scope
    store.register_inputs(inputs, loaded, ledger)
    if scope.full or scope.rebuilt or scope.removed:
        def materialize(folder: str, name: str, df) -> None:
            # rows of months read across a boundary (a stage later models read there: kept, the
            # build's stages are written anew each build)
            if inputs is not None and name not in month_scope.UNDATED and name not in month_scope.READ_ACROSS:
                df = df.where(expr(model_month(name)).isin(scope.rebuilt))
            if folder != "30_marts":
                stored = store.write_stage(name, df)
            else:
                stored = store.write_mart(name, df, None if inputs is None else scope.rebuilt + scope.removed)
            stored.createOrReplaceTempView(name)

        # a ledger too long to pass inline is read from its folders (one a file ever loaded) once
        cached = [t for t in LEDGER_READ if t not in ledger]
        for table in cached:
            spark.catalog.cacheTable(table)
        try:
            run_stages(spark, config, materialize, progress=progress)
        finally:
            for table in cached:
                spark.catalog.uncacheTable(table)
        if inputs is not None:
            progress.patched = refresh_previous_month(store, scope)
    publish(store, duck_path, scope, progress.patched)
    store.write_state(scope.fingerprints)
    return scope.rebuilt


def inline_ledger(con: duckdb.DuckDBPyConnection, limit: int | None = None) -> dict[str, list[tuple]]:
    """The ledger tables the models read (LEDGER_READ) with at most `limit` rows (default
    INLINE_LEDGER_ROWS), as the driver's DuckDB reads them (scope_db), in their warehouse columns:
    Spark gets them as inline tables. A longer one is left out (an inline table's SQL text grows
    with its rows), and Spark reads it from its Parquet."""
    limit = INLINE_LEDGER_ROWS if limit is None else limit
    out = {}
    for table in LEDGER_READ:
        cols = ", ".join(f'"{c}"' for c, _ in duck_shapes()[table])
        rows = con.execute(f"select {cols} from {table} order by file_id limit {limit + 1}").fetchall()
        if len(rows) <= limit:
            out[table] = rows
    return out


# The models Spark builds and keeps (the undated marts are built where they are published)
SPARK_MODELS = [m.name for m in stages() if m.name not in UNDATED_MARTS]
# The ledger tables the models read (source_files: a row per file ever loaded), handed to Spark
# from the driver (inline_ledger): read by Spark, each is a small file per file loaded, opened in
# a task at every build however few months it builds
LEDGER_READ = [t for t in LINEAGE if any(t in m.reads for m in stages())]
# The most rows a ledger table passes to Spark inline: a row per file loaded, a few thousand in
# three years of daily exports, far more where scrapes land one file per host per hour
INLINE_LEDGER_ROWS = 5000
# What a model's figures depend on beyond the SQL: the Python models and the Spark translation
SPARK_CODE = (*(f for f, _ in PYTHON_MODELS.values()), dialect, steps, spark_build)


@contextmanager
def scope_db(store: SparkStore, config: Config) -> Iterator[duckdb.DuckDBPyConnection]:
    """A driver-side DuckDB whose warehouse tables are views of the Spark warehouse's Parquet
    (loaded files only), with the config, the reference data and the state of the last build:
    where pipelines.month_scope maps rows to months and fingerprints them, as on one machine.
    A table dated by one expression is mapped by its partition month: its files' footers are
    read, not its rows."""
    con = duckdb.connect()
    try:
        con.execute("set TimeZone = 'UTC'")
        create_tables(con)
        load_reference(con)
        apply_config(con, config)
        written = {t for kind, tables in (("lineage", LINEAGE), ("facts", FACTS)) for t in tables if _view(con, store, kind, t)}
        con.execute(f"create table {month_scope.STATE} (month varchar, inputs_sha256 varchar)")
        if store.exists(store.STATE):
            con.execute(f"insert into {month_scope.STATE} select month, inputs_sha256 from read_parquet({_files(store, store.STATE)})")
        month_scope.map_rows(con, {t: "month" for t in MONTH_EXPR if t in written})
        yield con
    finally:
        con.close()


def _view(con: duckdb.DuckDBPyConnection, store: SparkStore, kind: str, table: str) -> bool:
    """The table as a view of its Parquet files (facts: of loaded files, with their partition
    month and a rowid month_scope does not use), if any file was written; else it stays empty."""
    files = _files(store, kind, table)
    if not one_row(con, f"select count(*) from glob({files})")[0]:
        return False
    hive = "{'month': 'VARCHAR', 'file_id': 'INTEGER'}" if kind == "facts" else "{'file_id': 'INTEGER'}"
    rows = f"read_parquet({files}, hive_partitioning = true, hive_types = {hive})"
    con.execute(f"drop table {table}")
    con.execute(f"create view {table} as select * from {rows}" if kind != "facts" else
                f"create view {table} as select *, 0::bigint as rowid from {rows} "
                "where file_id in (select file_id from source_files where status = 'loaded')")
    return True


def shared_fingerprint(con: duckdb.DuckDBPyConnection, config: Config) -> str:
    return month_scope.shared_fingerprint(con, config_variables(config), SPARK_CODE)


def state_sha256(fingerprints: dict[str, str]) -> str:
    """The state of a build as one sha256: a published file built from it knows it is current."""
    return hashlib.sha256(repr(sorted(fingerprints.items())).encode()).hexdigest()


def refresh_previous_month(store: SparkStore, scope: Scope) -> list[str]:
    """team_month's comparison with the month before (pipelines.month_scope.refresh_previous_month,
    on a driver-side DuckDB over the months it compares): the months rebuilt, and those after a
    month that changed, rewritten where their rows changed; returns the latter."""
    spark = store.spark
    changed = scope.rebuilt + scope.removed
    near = sorted({*scope.rebuilt, *(shift(m, -1) for m in scope.rebuilt), *(shift(m, 1) for m in changed)})
    tables = {t: files for t in month_scope.PREVIOUS_MONTH_TABLES if (files := _files(store, "marts", t, months=near))}
    with duckdb.connect() as con:
        for table, files in tables.items():
            con.execute(f"create table {table} as select * from read_parquet({files}, hive_partitioning = true, "
                        "hive_types = {'month': 'VARCHAR'})")
        patched = month_scope.refresh_previous_month(con, scope)
        for table in tables:
            written = scope.rebuilt + patched
            # the schema of the months it compares (every month's folder listed: a job past 32 months)
            schema = store.read_months(table, near).schema
            rows = spark.createDataFrame(con.sql(f"select * from {table} where list_contains(?::varchar[], month)",
                                                 params=[written]).to_arrow_table())
            store.write_mart(table, rows.select(*[rows[f.name].cast(f.dataType) for f in schema.fields]), written)
    return patched


def shift(month: str, months: int) -> str:
    """YYYY-MM `months` later (earlier when negative)."""
    n = int(month[:4]) * 12 + int(month[5:]) - 1 + months
    return f"{n // 12:04d}-{n % 12 + 1:02d}"


def duck_uri(uri: str) -> str:
    """Where DuckDB reads what Spark wrote: dbfs:/ through its FUSE mount, object stores as is
    (DuckDB's httpfs extension reads s3://, az:// and gs:// with the credentials it is given)."""
    return "/dbfs/" + uri[len("dbfs:/"):].lstrip("/") if uri.startswith("dbfs:/") else uri.removeprefix("file:")


def publish(store: SparkStore, duck_path: Path, scope: Scope, patched: list[str]) -> None:
    """The marts, lineage, disclosures and reference data into the DuckDB file reports read, in
    one transaction. A full build's marts are copied whole; otherwise the months written
    (rebuilt, and those whose previous-month columns were `patched`) replace those months'
    rows in the file published from the warehouse's last build (published_state). The contracts run on the months rebuilt, their findings kept by month as on one machine."""
    spark = store.spark
    written = sorted({*scope.rebuilt, *patched})
    con = connect(duck_path)
    con.execute("begin transaction")
    try:
        load_reference(con)
        for name in (m for m in MARTS if m not in ("contract_findings", *UNDATED_MARTS)):
            if scope.full:
                _copy(con, spark, store, name)
            else:
                con.execute(f"delete from {name} where list_contains(?::varchar[], month)", [[*written, *scope.removed]])
                if files := _files(store, "marts", name, months=written):
                    con.execute(f"insert into {name} by name select * from read_parquet({files}, hive_partitioning = true, "
                                "hive_types = {'month': 'VARCHAR'})")
        for table in LINEAGE:
            con.execute(f"delete from {table}")
            if one_row(con, f"select count(*) from glob({_files(store, 'lineage', table)})")[0]:
                con.execute(f"insert into {table} by name select * from read_parquet({_files(store, 'lineage', table)}, "
                            "hive_partitioning = true, hive_types = {'file_id': 'INTEGER'})")
        con.register("_rows", spark.table("disclosures").toArrow())
        con.execute("delete from disclosures")
        con.execute("insert into disclosures by name select * from _rows")
        con.unregister("_rows")
        for model in (m for m in stages() if m.name in UNDATED_MARTS):   # from what was just published
            build_model(con, model)
        record_findings(con, dataclasses.replace(scope, undated=True), _findings(con, store, scope))
        con.execute("create or replace table spark_build as select ?::timestamp as built_at, ? as warehouse, ? as state_sha256",
                    [datetime.now(timezone.utc).replace(tzinfo=None), store.root, state_sha256(scope.fingerprints)])
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    finally:
        con.close()


def _findings(con: duckdb.DuckDBPyConnection, store: SparkStore, scope: Scope) -> list[tuple]:
    """The contract findings on the months rebuilt (pipelines.stages, by month) and on the
    undated marts: temp views of each checked table's rebuilt months (int_gpu_hours: the build's
    intermediate, which holds those months), for this connection only."""
    months = _list(scope.rebuilt) + "::varchar[]"
    checked = [t for t in VALIDATED if t not in month_scope.UNDATED]
    for table in checked:
        rows = f"read_parquet({_files(store, 'build', table)})" if table == "int_gpu_hours" else month_scope.qualified(con, table)
        con.execute(f"create or replace temp view {table} as select * from {rows} "
                    f"where list_contains({months}, {month_scope.month_of(table)})")
    found = month_findings(con, scope) + [("-", *f) for t in sorted(month_scope.AFTER) if t in VALIDATED
                                           for f in contract_failures(con, t, VALIDATED[t])]
    for table in checked:
        con.execute(f"drop view temp.main.{table}")
    return found


def published_state(duck_path: Path) -> tuple[str, str] | None:
    """(warehouse, state_sha256) of the Spark build a DuckDB file holds, if any."""
    if not duck_path.exists():
        return None
    with connect(duck_path) as con:   # as publish opens it (one DuckDB instance per file and configuration)
        if not one_row(con, "select count(*) from duckdb_columns() where table_name = 'spark_build' "
                       "and column_name = 'state_sha256'")[0]:
            return None
        row = con.execute("select warehouse, state_sha256 from spark_build").fetchone()
    return (row[0], row[1]) if row else None


def _files(store: SparkStore, *parts: str, months: list[str] | None = None) -> str:
    """The Parquet files under a folder as a DuckDB list; of its `months` folders that exist
    ('' when none does)."""
    if months is None:
        return literal(duck_uri(store.path(*parts)) + "/**/*.parquet")
    have = [m for m in months if m in store.mart_months(parts[-1])]
    return _list([duck_uri(store.path(*parts, f"month={m}")) + "/*.parquet" for m in have]) if have else ""


def _list(values: list[str]) -> str:
    return "[" + ", ".join(literal(v) for v in values) + "]"


def _copy(con, spark, store: SparkStore, name: str) -> None:
    """One mart: read by DuckDB from Spark's Parquet (month from the partition folder), in the
    model's column order; an empty mart from its Spark schema."""
    df = spark.table(name)
    cols = ", ".join(f'"{c}"' for c in df.columns)
    if not df.inputFiles():   # no rows written (listed, not read: no Spark job)
        con.register("_empty", df.limit(0).toArrow())
        con.execute(f"create or replace table {name} as select {cols} from _empty")
        con.unregister("_empty")
        return
    con.execute(f"create or replace table {name} as select {cols} from read_parquet({_files(store, 'marts', name)}, "
                "hive_partitioning = true, hive_types = {'month': 'VARCHAR'})")


__all__ = ["open_store", "ingest", "build", "publish", "local_path"]
