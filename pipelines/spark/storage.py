"""The Spark warehouse: Parquet tables under one URI (a folder, s3://, abfss://, dbfs:/).

    <root>/facts/<table>/month=YYYY-MM/file_id=N/     charges, gpu_hour_parts, gpu_pod_parts, runs, invoices, work_log,
                                                       grid_hours, instruments (disclosures and FOCUS columns as
                                                       written: month=none)
    <root>/lineage/<table>/file_id=N/                  source_files, rejects, row_findings, findings
    <root>/build/<stage>/                              intermediate stages of the last build (its months)
    <root>/marts/<mart>/month=YYYY-MM/                 what reports read (published to DuckDB)
    <root>/state/build_months/                         each month's inputs_sha256 at the last build

A file's rows are written first, under partitions of their own; its source_files row is written
last and is the commit: readers take facts of loaded file ids only, so a run that stops half
way leaves partitions nobody reads (the next load of that file overwrites them). A restated
delivery writes the new file, then marks the old one replaced, then deletes its partitions.
A build writes each mart one folder per month: the months whose inputs changed
(pipelines.month_scope), or every month, the mart replaced whole. <root>/state/build_months
keeps each month's inputs as last built.

Table shapes are the DuckDB warehouse's (pipelines/sql/00_warehouse), read from an in-memory
DuckDB, so both engines hold the same columns with the same types.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import duckdb
from sqlglot import exp

from pipelines import month_scope
from pipelines.month_scope import BILLING_FILE_TABLES, LEDGER_TABLES, MONTH_EXPR, ROW_MONTHS
from pipelines.month_scope import MONTH_OF as MODEL_MONTH
from pipelines.spark.dialect import DIALECT, spark_tree
from pipelines.warehouse import create_tables

FACTS = ("charges", "charge_source_columns", "gpu_hour_parts", "gpu_pod_parts", "gpu_request_parts", "runs", "disclosures", "invoices",
         "work_log", "grid_hours", "instruments", "provider_carbon",
         # FOCUS 1.3/1.4 beside the charges (readers.stage_billing, readers.provider_parts)
         "focus_origin_charges", "focus_allocations", "charge_contracts", "contract_commitments",
         # the small formats' tables, written by their DuckDB reader on the driver (ingest.on_driver)
         "invoice_details", "exchange_rates", "slurm_jobs", "dcgm_job_stats")
LINEAGE = LEDGER_TABLES
# The month a fact row belongs to (its partition), billing by billing period like the marts: one
# machine's month of a row (pipelines.month_scope) where that is one expression, in Spark SQL...
SCOPED_MONTH = {**MONTH_EXPR, "gpu_hour_parts": MODEL_MONTH["int_gpu_hours"], "gpu_pod_parts": MODEL_MONTH["int_gpu_hours"]}
# ...and where one machine maps a row to several months (a window, a lookback), the month it starts in
SPARK_MONTH = {
    "runs": "date_format(end_utc, 'yyyy-MM')",
    "disclosures": "'none'",
    "work_log": "date_format(start_utc, 'yyyy-MM')",
    "instruments": "date_format(period_start, 'yyyy-MM')",
    # FOCUS columns as written: keyed by file and row like charges, no date of its own
    "charge_source_columns": "'none'",
    "focus_allocations": "'none'",
    "focus_origin_charges": "'none'",
    "charge_contracts": "'none'",
    "contract_commitments": "date_format(period_start, 'yyyy-MM')",
    "invoice_details": "'none'",
    "exchange_rates": "rate_month",
    "slurm_jobs": "coalesce(date_format(start_utc, 'yyyy-MM'), 'none')",
}


@lru_cache(maxsize=None)
def month_of(table: str) -> str:
    """A fact table's partition month as a Spark SQL expression."""
    if table in SCOPED_MONTH:
        return as_spark(SCOPED_MONTH[table])
    return SPARK_MONTH[table]


def as_spark(expr: str) -> str:
    return spark_tree(f"select {expr}").expressions[0].sql(dialect=DIALECT)


@lru_cache(maxsize=None)
def model_month(model: str) -> str:
    """The month of a model's row (pipelines.month_scope.month_of) as a Spark SQL expression."""
    return as_spark(month_scope.month_of(model))


# Telemetry: a month reads its own GPU-hours and, near a boundary, a few of its neighbours'
TELEMETRY = ("gpu_hour_parts", "gpu_pod_parts")
# Tables read by the files a month's rows come from (a row of them may feed several months)
BY_FILE = (*BILLING_FILE_TABLES, *(t for t in ROW_MONTHS if t not in TELEMETRY))


@dataclass(frozen=True)
class InputScope:
    """The rows a build of some months reads (pipelines.month_scope's stand-ins, on Spark): a
    table dated by one expression by its partition month; telemetry by month, with the
    GPU-hours of other months the months read (`hours`); the others by the files whose rows
    the months read (`files`), whole: a row of another month among them builds rows of that
    month only, which the build drops. Disclosures and the ledger are read whole."""
    months: list[str]
    files: dict[str, list[int]] = field(default_factory=dict)
    hours: list[tuple] = field(default_factory=list)   # (gpu_uuid, hour_start)

    def months_read(self, table: str) -> list[str] | None:
        """The partition months of a table the months read (those folders alone are read), or
        None where it is read by file (`files`: those files' folders alone) or whole (undated)."""
        if table in MONTH_EXPR:
            return sorted(self.months)
        if table in TELEMETRY:
            return sorted({*self.months, *(h.strftime("%Y-%m") for _, h in self.hours)})
        return None

    def rows(self, spark, table: str, df):
        """`df` (a fact table with its partition month, of the folders months_read or `files`
        gave) cut to the rows the months read: a table dated by one expression, or read by
        file, holds those rows already."""
        if table not in TELEMETRY:
            return df
        own = df.where(df.month.isin(self.months))
        if not self.hours:
            return own
        from pyspark.sql.functions import broadcast
        near = spark.createDataFrame(self.hours, "gpu_uuid string, hour_start timestamp_ntz")
        outside = sorted({h.strftime("%Y-%m") for _, h in self.hours})
        return own.unionByName(df.where(df.month.isin(outside)).join(broadcast(near), ["gpu_uuid", "hour_start"], "left_semi"))


@lru_cache(maxsize=1)
def duck_shapes() -> dict[str, list[tuple[str, str]]]:
    """Column names and DuckDB types of every warehouse table, from the schema files themselves."""
    con = duckdb.connect()
    create_tables(con)
    return {t: [(c, ty) for c, ty in con.execute(
        "select column_name, data_type from information_schema.columns where table_name = ? order by ordinal_position",
        [t]).fetchall()] for t in (*FACTS, *LINEAGE)}


@lru_cache(maxsize=1)
def duck_defaults() -> dict[tuple[str, str], str]:
    """(table, column) -> the column's DEFAULT as SQL, where the schema gives one."""
    con = duckdb.connect()
    create_tables(con)
    return {(t, c): d for t, c, d in con.execute(
        "select table_name, column_name, column_default from information_schema.columns where column_default is not null"
    ).fetchall()}


def spark_type(duck: str) -> str:
    """A DuckDB column type as Spark DDL."""
    duck = duck.upper()
    if duck.endswith("[]"):
        return f"array<{spark_type(duck[:-2])}>"
    if duck.startswith("MAP("):
        k, v = duck[4:-1].split(",", 1)
        return f"map<{spark_type(k.strip())},{spark_type(v.strip())}>"
    if duck.startswith("DECIMAL"):
        return duck.lower()
    return {"INTEGER": "int", "BIGINT": "bigint", "VARCHAR": "string", "DOUBLE": "double", "BOOLEAN": "boolean",
            "TIMESTAMP": "timestamp_ntz", "JSON": "string", "DATE": "date"}[duck]


def spark_schema(table: str, without: str | None = None) -> str:
    """A warehouse table's columns as Spark DDL, less the column `without` (file_id: added at the write)."""
    return ", ".join(f"`{c}` {spark_type(t)}" for c, t in duck_shapes()[table] if c != without)


def checkpoint(df):
    """The rows computed now and the plan cut there, on the executors' disks. Kept in their
    memory, a CUR's staged lines (20M of them on local[2] with 4 GB) left the aggregates over
    them no execution memory at all (UNABLE_TO_ACQUIRE_MEMORY, got 0): a task pins the cached
    block it reads. Rows the optimizer knows there are none of (known_empty) run no job: the
    plan is cut at an empty relation of the same columns."""
    from pyspark import StorageLevel
    if known_empty(df):
        return empty_frame(df.sparkSession, df._jdf.schema())
    return df.localCheckpoint(eager=True, storageLevel=StorageLevel.DISK_ONLY)


def counted_checkpoint(df):
    """checkpoint(df) with the rows it keeps counted in its own tasks (an Observation: no job of
    its own), for a model's kept CTEs. A checkpoint is a scan whose size Spark does not know: a
    join to one shuffled and sorted the other side (every focus_export line against a few thousand
    allocation groups). One that keeps no row is an empty relation (empty_frame: the joins to it
    fold away at planning); one that keeps few (its rows times Spark's estimate of a row within
    the broadcast threshold) is marked to be broadcast, as Spark would broadcast it had it known
    its size: a join that its condition leaves with none of them reads nothing on the other side."""
    from pyspark.sql import Observation
    from pyspark.sql.functions import count, lit
    if known_empty(df):
        return checkpoint(df)
    seen = Observation()
    kept = checkpoint(df.observe(seen, count(lit(1)).alias("rows")))
    rows = int(seen.get["rows"])
    if not rows:
        return empty_frame(df.sparkSession, df._jdf.schema())
    limit = df.sparkSession._jsparkSession.sessionState().conf().autoBroadcastJoinThreshold()
    return kept.hint("broadcast") if rows * df._jdf.schema().defaultSize() <= limit else kept


def known_empty(df) -> bool:
    """Spark's optimizer has proved no row comes out (its plan reads only inputs known empty, or
    filters on a false condition): the optimised plan is an empty local relation. Nothing runs;
    the optimised plan is the one the query's own execution uses after."""
    plan = df._jdf.queryExecution().optimizedPlan()
    return bool(plan.getClass().getSimpleName() == "LocalRelation" and plan.data().isEmpty())


def empty_frame(spark, jschema):
    """No rows, of a JVM StructType, as a relation Spark's optimizer knows is empty: a query over
    it folds away (PropagateEmptyRelation) instead of scanning files, shuffling and compiling
    code for no rows. (createDataFrame([], schema) is a Python RDD, which Spark cannot see into.)"""
    from pyspark.sql import DataFrame
    return DataFrame(spark._jsparkSession.createDataFrame(spark._jvm.java.util.ArrayList(), jschema), spark)


def empty_table(spark, ddl: str):
    """empty_frame of a Spark DDL schema."""
    return empty_frame(spark, spark._jvm.org.apache.spark.sql.types.StructType.fromDDL(ddl))


def file_filter(ids: list[int]) -> str:
    """`file_id` among `ids`, as one Spark SQL condition: Column.isin makes a call into the JVM
    per id, for every fact table, and the loaded ids are every file ever loaded."""
    return f"file_id in ({', '.join(str(int(i)) for i in ids)})" if ids else "false"


def local_view(spark, name: str, columns: list[tuple[str, str]], rows) -> None:
    """A temp view of a few hundred rows at most (config, reference data) as an inline table,
    each value a literal rendered by sqlglot and cast to its column's type. Spark's optimizer
    then knows its size and its rows: a join to it is broadcast, and a query over an empty one
    folds away. (A frame made from Python rows is an RDD of unknown size, which Spark never
    broadcasts: every join to a config table of five rows sorted and shuffled the whole CUR.)"""
    local_frame(spark, columns, rows).createOrReplaceTempView(name)


def local_frame(spark, columns: list[tuple[str, str]], rows):
    """local_view's inline table as a frame (no rows: an empty relation)."""
    if not rows:
        return empty_table(spark, ", ".join(f"`{c}` {t}" for c, t in columns))
    names = ", ".join(exp.to_identifier(c, quoted=True).sql(dialect=DIALECT) for c, _ in columns)
    return spark.sql(f"select * from values {inline_values([t for _, t in columns], rows)} as t({names})")


def inline_values(types: list[str], rows) -> str:
    """Rows as an inline table's VALUES list, each value a literal rendered by sqlglot and cast
    to its column's type (Spark DDL): the text of exp.cast(exp.convert(v), type), written without
    a generator per value. sqlglot's generator parses the type names "json" and "float" again for
    every CAST it writes (about 0.15 ms a value, 2.5 CPU-s for the reference tables' 15,000), so
    a plain literal's CAST is put together here around the literal and the type, each rendered
    once by sqlglot; a value that converts to more than a literal (a list, a time) goes through
    exp.cast as before."""
    parsed = [exp.DataType.build(t) for t in types]   # read as exp.cast reads a type name
    type_sql = [t.sql(dialect=DIALECT) for t in parsed]
    generator = DIALECT().generator()

    def cell(value, i: int) -> str:
        node = exp.convert(value)
        if isinstance(node, (exp.Literal, exp.Null, exp.Boolean)):
            return f"CAST({generator.generate(node, copy=False)} AS {type_sql[i]})"
        return exp.cast(node, parsed[i]).sql(dialect=DIALECT)

    return ", ".join("(" + ", ".join(cell(v, i) for i, v in enumerate(row)) + ")" for row in rows)


class SparkStore:
    """One Spark warehouse (a URI) and the session that reads and writes it."""

    STATE = "state/build_months"   # pipelines.month_scope.STATE: each month's inputs as last built

    def __init__(self, spark, root: str) -> None:
        self.spark = spark
        self.root = root.rstrip("/")

    def path(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    def _read(self, kind: str, table: str, month: bool = False, months: list[str] | None = None,
              files: list[int] | None = None):
        """A stored table in the DuckDB shape (partition folders read back as columns, then
        dropped or reordered; `month`: a fact table's partition month kept last); an empty one
        when nothing was written yet. With `months`, a fact table's folders of those months
        alone; with `files`, its folders of those files alone (found by one glob on the driver):
        the table's other months and files (all its history) are not listed by Spark."""
        cols = [f"`{c}`" for c, _ in duck_shapes()[table]] + (["month"] if month else [])
        schema = spark_schema(table) + (", `month` string" if kind == "facts" else "")
        if files is not None:
            ids = ",".join(str(int(f)) for f in files)
            folders = [p.toString() for p in self._glob(self.path(kind, table, "month=*", f"file_id={{{ids}}}"))[1]] if ids else []
        elif months is not None:
            folders = self.month_folders(kind, table, months)
        else:
            folders = [self.path(kind, table)]
        if not folders or not self.exists(kind, table):
            return empty_table(self.spark, schema).select(*cols)
        # basePath: the month and file_id folders under it are still read back as columns
        return self.spark.read.option("basePath", self.path(kind, table)).schema(schema).parquet(*folders).select(*cols)

    def source_files(self):
        return self._read("lineage", "source_files")

    def loaded_ids(self) -> list[int]:
        return [r[0] for r in self.source_files().where("status = 'loaded'").select("file_id").collect()]

    def fact(self, table: str):
        """A fact table as the models see it: rows of loaded files only."""
        df = self._read("facts", table)
        return df.where(df.file_id.isin(self.loaded_ids()))

    def register_inputs(self, scope: InputScope | None = None, loaded: list[int] | None = None,
                        ledger: dict[str, list[tuple]] | None = None) -> None:
        """Temp views of every fact and lineage table under the names the models use; with a
        `scope`, the fact tables hold only the rows its months read. `loaded`: the ids of the
        files loaded, where the caller has read the ledger already (engine.scope_db does, on
        the driver); else a Spark job reads them from every source_files partition, one a file
        ever loaded. `ledger`: a lineage table's rows as the caller read them (in its
        duck_shapes columns), an inline table Spark opens no file for; a lineage table not in
        it is read from its Parquet, a folder per file ever loaded."""
        ids = self.loaded_ids() if loaded is None else loaded
        for table in FACTS:
            df = self._read("facts", table, month=True, months=None if scope is None else scope.months_read(table),
                            files=None if scope is None else scope.files.get(table))
            df = df.where(file_filter(ids))
            if scope is not None:
                df = scope.rows(self.spark, table, df)
            df.drop("month").createOrReplaceTempView(table)
        for table in LINEAGE:
            if ledger is not None and table in ledger:
                local_view(self.spark, table, [(c, spark_type(t)) for c, t in duck_shapes()[table]], ledger[table])
            else:
                self._read("lineage", table).createOrReplaceTempView(table)

    def write_fact(self, table: str, df) -> None:
        """A file's rows in the table's shape: a column the reader does not produce takes the
        schema's default, else null (as an INSERT of the staged columns gives on DuckDB)."""
        have = set(df.columns)
        cols = [f"cast(`{c}` as {spark_type(t)}) as `{c}`" if c in have else
                f"cast({duck_defaults().get((table, c), 'null')} as {spark_type(t)}) as `{c}`"
                for c, t in duck_shapes()[table]]
        out = df.selectExpr(*cols).selectExpr("*", f"{month_of(table)} as month")
        out.write.mode("overwrite").partitionBy("month", "file_id").parquet(self.path("facts", table))

    def write_lineage(self, table: str, df) -> None:
        cols = [c for c, _ in duck_shapes()[table]]
        df.select(*[f"`{c}`" for c in cols]).write.mode("overwrite").partitionBy("file_id").parquet(self.path("lineage", table))

    def drop_file(self, file_id: int) -> None:
        """Delete a replaced file's partitions (after its source_files row says replaced)."""
        for table in FACTS:
            self._delete(self.path("facts", table, "*", f"file_id={int(file_id)}"))
        for table in ("rejects", "row_findings", "findings"):
            self._delete(self.path("lineage", table, f"file_id={int(file_id)}"))

    def write_stage(self, name: str, df):
        """An intermediate stage's result, stored and read back (its plan ends here) with the
        schema it was written with: no footer read to learn it again. One the optimizer knows
        empty is read back as an empty relation (stored_empty)."""
        df.write.mode("overwrite").parquet(self.path("build", name))
        if (empty := self.stored_empty(df)) is not None:
            return empty
        return self.spark.read.schema(df.schema).parquet(self.path("build", name))

    def stored_empty(self, df):
        """What a read back of `df` gives when the optimizer knows it has no rows (known_empty),
        else None: no rows, in its columns, nullable as Parquet reads them. The models after it
        then fold away over it (empty_frame): a month without telemetry or cluster jobs builds
        those models' chains without a job."""
        return empty_frame(self.spark, df._jdf.schema().asNullable()) if known_empty(df) else None

    def write_mart(self, name: str, df, months: list[str] | None = None):
        """A mart, partitioned by month. Without `months` it is replaced whole: a build of every
        month, where a month it no longer holds (its files all replaced by another month's) goes
        with the others; one pass over the model (a dynamic overwrite would need the months
        written, a second pass, to remove the others). With `months`, those months' folders are
        replaced by `df`'s rows (of those months) and no other folder is read or written.
        Returns the months written, read back."""
        target = self.path("marts", name)
        if months is None:
            df.write.mode("overwrite").option("partitionOverwriteMode", "static").partitionBy("month").parquet(target)
            if (empty := self.stored_empty(df)) is not None:
                return empty
            return self.spark.read.schema(df.schema).parquet(target).select(*df.columns)
        for month in months:
            self._delete(self.path("marts", name, f"month={month}"))
        df.write.mode("overwrite").option("partitionOverwriteMode", "dynamic").partitionBy("month").parquet(target)
        if (empty := self.stored_empty(df)) is not None:
            return empty
        return self.read_months(name, months, df.schema).select(*df.columns)

    def read_months(self, name: str, months: list[str], schema=None):
        """A mart's folders of `months` alone (basePath: month is still a column), with
        `schema` (else read from their files); no rows where none of them exists. The mart's
        other months, its history, are not listed."""
        target = self.path("marts", name)
        folders = self.month_folders("marts", name, months)
        reader = self.spark.read.option("basePath", target)
        if not folders:
            if schema is None:
                raise ValueError(f"{name}: none of the months {months} is written, and no schema given")
            return empty_frame(self.spark, self.spark._jvm.org.apache.spark.sql.types.DataType.fromJson(schema.json()).asNullable())
        return (reader if schema is None else reader.schema(schema)).parquet(*folders)

    def month_folders(self, kind: str, table: str, months: list[str]) -> list[str]:
        """A table's folders of `months` that exist (each checked, none listed)."""
        return [self.path(kind, table, f"month={m}") for m in months if self.exists(kind, table, f"month={m}")]

    def mart_months(self, name: str) -> list[str]:
        """The month folders a mart holds (listed, not read)."""
        return sorted(p.getName().removeprefix("month=") for p in self._glob(self.path("marts", name, "month=*"))[1])

    def write_state(self, fingerprints: dict[str, str]) -> None:
        self.spark.createDataFrame(sorted(fingerprints.items()), "month string, inputs_sha256 string").coalesce(1) \
            .write.mode("overwrite").parquet(self.path(self.STATE))

    def _glob(self, pattern: str):
        """(file system, the paths matching a Hadoop glob)."""
        glob = self.spark.sparkContext._jvm.org.apache.hadoop.fs.Path(pattern)
        fs = glob.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration())
        return fs, [status.getPath() for status in fs.globStatus(glob) or []]

    def _delete(self, pattern: str, keep: Collection[str] = frozenset()) -> None:
        fs, paths = self._glob(pattern)
        for path in paths:
            if path.getName() not in keep:
                fs.delete(path, True)

    def exists(self, *parts: str) -> bool:
        jvm = self.spark.sparkContext._jvm
        p = jvm.org.apache.hadoop.fs.Path(self.path(*parts))
        return p.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration()).exists(p)


def local_path(uri: str) -> Path | None:
    """The folder of a file: URI or plain path, else None (object stores)."""
    if uri.startswith("file:"):
        return Path(uri[len("file:"):])
    return None if "://" in uri or uri.startswith("dbfs:") else Path(uri)
