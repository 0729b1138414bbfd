"""bench_months on Spark: the demo month in a Spark warehouse with history copied into the
months before it, built once in full, then its FOCUS delivery restated, ingested and the build
that follows timed, in CPU seconds of the process tree (Spark's JVM included) and wall.

History is made as on DuckDB (bench_months.shifted), on the warehouse's Parquet itself: each
fact partition (month=M/file_id=N) and lineage partition (file_id=N) of the demo month read by
DuckDB, its timestamps and periods moved back k months, runs and jobs renamed, and written as
month=M-k/file_id=N+k*step; a copy's source_files row gets its own path and sha256. Spark then
reads a copy as it reads a delivery.

The demo month is sampled every MB_BENCH_SPARK_MONTHS_INTERVAL seconds (300): the warehouse
holds hourly GPU parts whatever the interval, so the build reads as much as at 30 s, and Spark's
ingest of the text is cut tenfold. Spark runs local[2] with the tests' settings
(tests/conftest.py SPARK_TEST_CONF: no generated code, no adaptive plans, the C1 JIT only):
on a few thousand rows a fresh JVM spends more CPU compiling than running, and 36 months are
built once in full per run.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import duckdb

from benchmarks.bench_spark import PEAK_TREE
from benchmarks.common import measure
from pipelines.spark.engine import shift

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


def base_warehouse(demo: Path, config: Path, work: Path, inputs: tuple[str, ...]) -> Path:
    """The demo month ingested into a Spark warehouse (no build)."""
    swh = work / "spark-base"
    shutil.rmtree(swh, ignore_errors=True)
    child(config, swh, work / "unused.duckdb", [demo / d for d in inputs], build=False)
    return swh
