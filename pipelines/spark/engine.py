"""`--engine spark`: ingest into and build from the Spark warehouse, then publish the marts where
the reports read them, a DuckDB file on one machine (reports never need Spark).

Publishing copies, in one DuckDB transaction: every mart, the lineage tables (source_files,
rejects, findings), the disclosures and the reference tables; then the contracts run on the
published marts with the same pandera models and the same function as on one machine
(pipelines.stages.contract_failures), so a failure is located the same way. pandera's own
pyspark backend is not used: it imports pandas-on-Spark, which does not import under pandas 3
(pyspark 4.3), and it reports failures per check, not per row.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from core.sql import literal
from pipelines.config import Config
from pipelines.ingest import FileResult
from pipelines.progress import BuildProgress
from pipelines.spark.build import run_stages
from pipelines.spark.session import spark_session
from pipelines.spark.storage import LINEAGE, SparkStore, local_path
from pipelines.stages import MARTS, UNDATED_MARTS, VALIDATED, build_model, contract_failures, stages
from pipelines.warehouse import connect
from sources.reference_data import load_reference

DEFAULT_SPARK_WAREHOUSE = "build/spark-warehouse"


def open_store(config: Config, warehouse: str | None = None) -> SparkStore:
    spark = spark_session(config.engine.master, config.engine.conf)
    return SparkStore(spark, warehouse or config.engine.warehouse or DEFAULT_SPARK_WAREHOUSE)


def ingest(store: SparkStore, paths: Iterable[str | Path], kind: str, options: dict[str, Any], config: Config) -> list[FileResult]:
    from pipelines.spark.ingest import ingest as run
    return run(store.spark, store, paths, kind, options, config)


def build(store: SparkStore, config: Config, duck_path: Path, progress: BuildProgress | None = None) -> list[str]:
    """Stages on Spark, marts to the Spark warehouse, then published to `duck_path`; returns the
    months built. `progress` (optional) keeps each model's seconds."""
    spark = store.spark
    store.register_inputs()

    def materialize(folder: str, name: str, df) -> None:
        stored = store.write_mart(name, df) if folder == "30_marts" else store.write_stage(name, df)
        stored.createOrReplaceTempView(name)

    run_stages(spark, config, materialize, progress=progress)
    publish(store, duck_path)
    return [r[0] for r in spark.sql("select distinct month from team_month order by 1").collect()]


def duck_uri(uri: str) -> str:
    """Where DuckDB reads what Spark wrote: dbfs:/ through its FUSE mount, object stores as is
    (DuckDB's httpfs extension reads s3://, az:// and gs:// with the credentials it is given)."""
    return "/dbfs/" + uri[len("dbfs:/"):].lstrip("/") if uri.startswith("dbfs:/") else uri.removeprefix("file:")


def publish(store: SparkStore, duck_path: Path) -> None:
    """The marts, lineage, disclosures and reference data into the DuckDB file reports read."""
    spark = store.spark
    con = connect(duck_path)
    con.execute("begin transaction")
    try:
        load_reference(con)
        for name in (m for m in MARTS if m not in ("contract_findings", *UNDATED_MARTS)):
            _copy(con, spark, store, name)
        for table in (*LINEAGE, "disclosures"):
            rows = spark.table(table).toArrow()
            con.register("_rows", rows)
            con.execute(f"delete from {table}")
            con.execute(f"insert into {table} by name select * from _rows")
            con.unregister("_rows")
        for model in (m for m in stages() if m.name in UNDATED_MARTS):   # from what was just published
            build_model(con, model)
        # the intermediate the int_gpu_hours contract checks, for this connection only
        con.execute(f"create or replace temp view int_gpu_hours as select * from read_parquet({_files(store, 'build', 'int_gpu_hours')})")
        findings = [f for table, model in VALIDATED.items() for f in contract_failures(con, table, model)]
        con.execute("create or replace table contract_findings (table_name varchar, column_name varchar, "
                    "check_name varchar, rows bigint, example varchar)")
        if findings:
            con.executemany("insert into contract_findings values (?, ?, ?, ?, ?)", findings)
        con.execute("create or replace table spark_build as select ?::timestamp as built_at, ? as warehouse",
                    [datetime.now(timezone.utc).replace(tzinfo=None), store.root])
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    finally:
        con.close()


def _files(store: SparkStore, *parts: str) -> str:
    return literal(duck_uri(store.path(*parts)) + "/**/*.parquet")


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
