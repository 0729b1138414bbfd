"""bench_months on Spark: the demo month in a Spark warehouse, built, with history copied into
the months before it as a build of every month leaves it; then its FOCUS delivery restated,
ingested and the build that follows timed, in CPU seconds of the process tree (Spark's JVM
included) and wall.

History is made as on DuckDB (bench_months.shifted), on the warehouse's Parquet itself: each
fact partition (month=M/file_id=N) and lineage partition (file_id=N) of the demo month read by
DuckDB, its timestamps and periods moved back k months, runs and jobs renamed, and written as
month=M-k/file_id=N+k*step; a copy's source_files row gets its own path and sha256. Spark then
reads a copy as it reads a delivery. What a build of those months writes comes from the DuckDB
engine's build of the same rows (built_history): a Spark build of 36 months takes most of an
hour on 2 cores, one of the month after them a few minutes.

The demo month is sampled every MB_BENCH_SPARK_MONTHS_INTERVAL seconds (300): the warehouse
holds hourly GPU parts whatever the interval, so the build reads as much as at 30 s, and Spark's
ingest of the text is cut tenfold. Spark runs local[2] with the tests' settings
(tests/conftest.py SPARK_TEST_CONF: no generated code, no adaptive plans, the C1 JIT only):
on a few thousand rows a fresh JVM spends more CPU compiling than running.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import duckdb

from benchmarks.bench_spark import PEAK_TREE
from benchmarks.common import cli, measure
from pipelines.spark.engine import shift
from pipelines.spark.storage import FACTS, LINEAGE
from pipelines.warehouse import create_tables

INTERVAL = int(os.environ.get("MB_BENCH_SPARK_MONTHS_INTERVAL", "300"))
CONF = {"spark.sql.shuffle.partitions": "2", "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.adaptive.enabled": "false",
        "spark.driver.memory": "2g",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"}
MONTH_DIR = re.compile(r"month=(\d{4}-\d{2})")


def child(config: Path, swh: Path, duck: Path, ingest: list[Path], build: bool = True) -> dict:
    """One process: Spark started, `ingest` loaded, then (if `build`) a build; each step's wall
    and CPU seconds (the process tree), and the build's months."""
    code = f"""{PEAK_TREE}
import dataclasses, json, time
from pathlib import Path
from pipelines.config import EngineConfig, load_config
from pipelines.progress import BuildProgress
from pipelines.spark import engine as se
config = load_config({str(config)!r})
config = dataclasses.replace(config, engine=EngineConfig('spark', 'local[2]', {str(swh)!r}, {CONF!r}))
t0, c0 = time.perf_counter(), _cpu_s()
store = se.open_store(config)
t_start, c_start = time.perf_counter() - t0, _cpu_s() - c0
t0, c0 = time.perf_counter(), _cpu_s()
se.ingest(store, [Path(p) for p in {[str(p) for p in ingest]!r}], 'auto', {{}}, config)
t_ingest, c_ingest = time.perf_counter() - t0, _cpu_s() - c0
rebuilt, progress, t_build, c_build = [], BuildProgress(), 0.0, 0.0
if {build!r}:
    t0, c0 = time.perf_counter(), _cpu_s()
    rebuilt = se.build(store, config, Path({str(duck)!r}), progress)
    t_build, c_build = time.perf_counter() - t0, _cpu_s() - c0
print(json.dumps({{"start_s": t_start, "start_cpu_s": c_start, "ingest_s": t_ingest, "ingest_cpu_s": c_ingest,
                  "build_s": t_build, "build_cpu_s": c_build, "rebuilt": rebuilt,
                  "months": progress.scope.months if progress.scope else [], "patched": progress.patched,
                  "full": progress.scope.full if progress.scope else None,
                  "slowest_models": progress.slowest(5), "peak_mb": _peak[0] / 2**20}}, default=str))
"""
    return json.loads(measure(code)["stdout"].splitlines()[-1])


def add_history(swh: Path, months: int, shifted) -> None:
    """Copy the warehouse's loaded partitions into the `months - 1` months before them
    (`shifted(column, duckdb_type, k, step)`: bench_months' column rewrite)."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    lineage = swh / "lineage" / "source_files"
    step = max(int(p.name.removeprefix("file_id=")) for p in lineage.glob("file_id=*"))
    parts = [p for kind in ("facts", "lineage") for p in sorted((swh / kind).glob("*/**/file_id=*")) if p.is_dir()]
    for k in range(1, months):
        for part in parts:
            month = MONTH_DIR.search(str(part.relative_to(swh)))
            folder = part.parent if month is None else part.parent.parent / f"month={shift(month.group(1), -k)}"
            out = folder / f"file_id={int(part.name.removeprefix('file_id=')) + step * k}"
            out.mkdir(parents=True, exist_ok=True)
            for n, f in enumerate(sorted(part.glob("*.parquet"))):
                cols = con.execute(f"describe select * from read_parquet('{f}', hive_partitioning = false)").fetchall()
                select = ", ".join(copied(part.parent.name if month is None else part.parent.parent.name, c, t, k, step, shifted)
                                   for c, t, *_ in cols)
                con.execute(f"copy (select {select} from read_parquet('{f}', hive_partitioning = false)) "
                            f"to '{out / f'part-{n:05d}-history.parquet'}' (format parquet)")
    con.close()


def copied(table: str, column: str, dtype: str, k: int, step: int, shifted) -> str:
    """A column of a copy: the source file's own path, sha256 and delivery (its lineage row),
    else as bench_months shifts it."""
    if table == "source_files" and column in ("path", "sha256", "delivery_key"):
        return f"{column} || '#{k}' as {column}"
    if table == "source_files" and column == "replaced_by":
        return f"null::integer as {column}"
    return f"{shifted(column, dtype, k, step)} as {column}"


def base_warehouse(demo: Path, config: Path, work: Path, inputs: tuple[str, ...]) -> tuple[Path, dict]:
    """The demo month ingested into a Spark warehouse and built (published beside it as
    spark-base.duckdb), and that build's figures."""
    swh = work / "spark-base"
    shutil.rmtree(swh, ignore_errors=True)
    return swh, child(config, swh, work / "spark-base.duckdb", [demo / d for d in inputs])


def built_history(swh: Path, duck: Path, config: Path, work: Path) -> None:
    """The warehouse `swh` (the base, built, with history added) as a build of all its months
    leaves it, without Spark building them: the months' marts, and the int_gpu_hours stage the
    contracts read, from a DuckDB-engine build of the same loaded rows (the engines' marts are
    equal: tests/test_spark_equality.py), written in the columns and types Spark wrote the
    base's; then on Spark the build's state (each month's fingerprint, as engine.build computes
    it) and the DuckDB file it publishes (engine.publish, every month written), so the next
    Spark build is the incremental one. A copy of the built month's marts moved back in time
    would not be a build of the copies: a month in the history reads its neighbours (GPU-hours
    across a boundary, the previous month's team totals, a rate's lookback), and calendar
    months differ in length (two days of October land on the 30th of a shorter month)."""
    wh = work / f"{swh.name}-duckdb-built.duckdb"
    wh.unlink(missing_ok=True)
    con = duckdb.connect(str(wh))
    create_tables(con)
    for kind, tables in (("lineage", LINEAGE), ("facts", FACTS)):
        for table in tables:
            files = swh / kind / table
            if not any(files.glob("**/*.parquet")):
                continue
            rows = f"read_parquet('{files}/**/*.parquet', hive_partitioning = true, union_by_name = true)"
            loaded = "" if kind == "lineage" else " where file_id in (select file_id from source_files where status = 'loaded')"
            con.execute(f"insert into {table} by name select * exclude (month) from {rows}{loaded}" if kind == "facts"
                        else f"insert into {table} by name select * from {rows}")
    con.close()
    cli("build", "--warehouse", str(wh), "--config", str(config))
    con = duckdb.connect(str(wh), read_only=True)
    con.execute("set TimeZone = 'UTC'")
    for folder in [*sorted((swh / "marts").iterdir()), swh / "build" / "int_gpu_hours"]:
        rewrite(con, folder, partitioned=folder.parent.name == "marts")
    con.close()
    shutil.copy(work / "spark-base.duckdb", duck)
    code = f"""
import dataclasses
from pathlib import Path
from pipelines import month_scope
from pipelines.config import EngineConfig, load_config
from pipelines.spark import engine as se
config = load_config({str(config)!r})
config = dataclasses.replace(config, engine=EngineConfig('spark', 'local[2]', {str(swh)!r}, {CONF!r}))
store = se.open_store(config)
with se.scope_db(store, config) as con:
    scope = month_scope.plan(con, se.shared_fingerprint(con, config), se.SPARK_MODELS, built=lambda m: True)
assert not scope.full and not scope.removed, scope
scope = dataclasses.replace(scope, rebuilt=scope.months, undated=True)
store.register_inputs()
se.publish(store, Path({str(duck)!r}), scope, [])
store.write_state(scope.fingerprints)
"""
    measure(code)


def rewrite(con: duckdb.DuckDBPyConnection, folder: Path, partitioned: bool) -> None:
    """A Spark-written table (a mart: by month) replaced by the DuckDB table of its name, in the
    columns and types Spark wrote. A table Spark wrote no file of has no rows here either."""
    name = folder.name
    pattern = f"{folder}/{'*/' if partitioned else ''}*.parquet"
    if not list(folder.glob("*/*.parquet" if partitioned else "*.parquet")):
        assert con.execute(f"select count(*) from {name}").fetchone()[0] == 0, name
        return
    cols = con.execute(f"describe select * from read_parquet('{pattern}', hive_partitioning = false)").fetchall()
    select = ", ".join(f'"{c}"::{t} as "{c}"' for c, t, *_ in cols)
    shutil.rmtree(folder)
    if partitioned:
        con.execute(f"copy (select {select}, month from {name}) to '{folder}' (format parquet, partition_by (month))")
    else:
        folder.mkdir()
        con.execute(f"copy (select {select} from {name}) to '{folder / 'part-00000-duckdb.parquet'}' (format parquet)")
