"""A month's build against the warehouse's history: the demo month restated and built again
with 1, 12 and 36 months loaded (MB_BENCH_HISTORY, comma-separated). Target: the build at the
longest history within 1.3x of the build with the month alone.

History is the demo month's loaded rows copied into earlier months (timestamps and periods moved
back, each copy its own files, runs and jobs), so every month is as large as the demo month and
the build cannot tell a copy from a delivery. Each warehouse is built once in full; then the
demo month's FOCUS delivery is restated (one cost changed, the same file loaded again) and the
build that follows is timed, MB_BENCH_REPEAT times, the fastest counting.

Both engines (MB_BENCH_MONTHS_ENGINES, default duckdb,spark): Spark's warehouse gets its history
the same way, in its Parquet partitions, and what a build of every month writes from the DuckDB
engine's build of the same rows (benchmarks.spark_months); its month's build is judged in CPU
seconds of the process tree, its wall time shown beside.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import duckdb

from benchmarks import spark_months as spark_months_
from benchmarks.common import BENCH_DIR, REPEAT, cli, measure, report, target
from pipelines.month_scope import BILLING_FILE_TABLES, MONTH_EXPR, ROW_MONTHS

HISTORY = tuple(int(h) for h in os.environ.get("MB_BENCH_HISTORY", "1,12,36").split(","))
MONTH = "2026-10"
INPUTS = ("billing", "dcgm", "codecarbon", "invoices", "work")
MONTH_TEXT = frozenset({"period", "usage_month", "rate_month"})     # months written as YYYY-MM
RENAMED = frozenset({"run_key", "run_id", "job_id"})   # a copy's runs and jobs are other runs and jobs
ENGINES = os.environ.get("MB_BENCH_MONTHS_ENGINES", "duckdb,spark").split(",")
RATIO = f"month_build_{HISTORY[-1]}_over_{HISTORY[0]}"


def add_history(wh: Path, months: int) -> None:
    """Copy the warehouse's loaded rows into the `months - 1` months before them."""
    con = duckdb.connect(str(wh))
    step = con.execute("select max(file_id) from source_files").fetchone()[0]
    for k in range(1, months):
        con.execute("insert into source_files select file_id + ? * ?, path || '#' || ?, sha256 || ? , kind, format_version, "
                    "rows_read, rows_loaded, rows_rejected, status, loaded_at, delivery_key || ?, null, totals "
                    "from source_files where file_id <= ?", [step, k, k, k, k, step])
        for table in [*MONTH_EXPR, *BILLING_FILE_TABLES, *ROW_MONTHS]:
            cols = con.execute(f"select column_name, data_type from duckdb_columns() where table_name = '{table}' "
                               "order by column_index").fetchall()
            select = ", ".join(shifted(c, t, k, step) for c, t in cols)
            con.execute(f"insert into {table} select {select} from {table} where file_id <= {step}")
    # the next file loaded numbers after the copies
    con.execute(f"drop sequence file_id_seq; create sequence file_id_seq start {step * months + 1}")
    con.close()


def shifted(column: str, dtype: str, k: int, step: int) -> str:
    if column == "file_id":
        return f"file_id + {step * k}"
    if dtype.startswith("TIMESTAMP"):
        return f"{column} - interval {k} month"
    if dtype == "DATE":
        return f"({column} - interval {k} month)::date"
    if column in MONTH_TEXT:
        return f"strftime(strptime({column}, '%Y-%m') - interval {k} month, '%Y-%m')"
    if column in RENAMED:
        return f"{column} || '-{k}'"
    return column


def restate(focus: Path, usd: float = 0.01) -> None:
    """The FOCUS delivery again with its first positive BilledCost `usd` higher (a restatement)."""
    with focus.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    col = rows[0].index("BilledCost")
    row = next(r for r in rows[1:] if r[col] and float(r[col]) > 0)
    row[col] = f"{Decimal(row[col]) + Decimal(str(usd))}"
    with focus.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


def main() -> None:
    work = Path(tempfile.mkdtemp(dir=BENCH_DIR if BENCH_DIR.exists() else None))
    figures = {}
    if "duckdb" in ENGINES:
        figures["duckdb"] = duckdb_months(work)
    if "spark" in ENGINES:
        figures["spark"] = spark_months(work)
    shutil.rmtree(work, ignore_errors=True)
    report("months", {"load_average": round(os.getloadavg()[0], 2), **figures})
    for engine, got in figures.items():
        target("months", f"{engine}: a month's build, {HISTORY[-1]} months loaded / {HISTORY[0]}"
               + (" (CPU-s)" if engine == "spark" else ""), got[RATIO], 1.3)
    if "spark" in figures:
        target("months", f"spark: a month's build, {HISTORY[-1]} months loaded / {HISTORY[0]} (wall)",
               figures["spark"][f"wall_{RATIO}"], 1.3, judged=False)


def duckdb_months(work: Path) -> dict:
    demo = work / "demo"
    cli("demo", "--month", MONTH, "--out", str(demo))
    config = demo / "meterbook.toml"
    base = work / "base.duckdb"
    cli("ingest", *(str(demo / d) for d in INPUTS), "--warehouse", str(base))
    focus = next((demo / "billing").glob("focus*.csv"))
    figures: dict[str, dict] = {}
    for months in HISTORY:
        wh = work / f"history-{months}.duckdb"
        shutil.copy(base, wh)
        add_history(wh, months)
        full = measure(build_code(wh, config))
        runs = []
        for _ in range(REPEAT):
            restate(focus)
            cli("ingest", str(focus), "--warehouse", str(wh))
            runs.append(measure(build_code(wh, config)))
        fastest = min(runs, key=lambda r: r["wall_s"])
        out = json.loads(fastest["stdout"].strip().splitlines()[-1])
        assert out["rebuilt"] == [MONTH], out["rebuilt"]
        figures[str(months)] = {"months_loaded": len(out["months"]), "full_build_s": round(full["wall_s"], 2),
                                "month_build_s": round(fastest["wall_s"], 2), "runs_s": [round(r["wall_s"], 2) for r in runs],
                                "rebuilt": out["rebuilt"], "peak_rss_mb": round(fastest["peak_rss_mb"])}
    one, most = figures[str(HISTORY[0])], figures[str(HISTORY[-1])]
    return {"history": figures, RATIO: round(most["month_build_s"] / one["month_build_s"], 2)}


def spark_months(work: Path) -> dict:
    """As duckdb_months on Spark (benchmarks.spark_months): the month's build in CPU seconds of
    the process tree (the fastest of MB_BENCH_REPEAT counts) and wall, the session's start and
    the restated file's ingest apart. The demo month is built once on Spark; each history, one
    month included, is then what a build of every month leaves (spark_months.built_history), its
    setup timed apart, so the build timed is the incremental one at every length."""
    demo = work / "demo-spark"
    cli("demo", "--month", MONTH, "--out", str(demo), "--interval", str(spark_months_.INTERVAL))
    config = demo / "meterbook.toml"
    base, first = spark_months_.base_warehouse(demo, config, work, INPUTS)
    focus = next((demo / "billing").glob("focus*.csv"))
    figures = {str(months): spark_history(work, config, focus, base, months) for months in HISTORY}
    one, most = figures[str(HISTORY[0])], figures[str(HISTORY[-1])]
    return {"history": figures, "first_full_build_cpu_s": round(first["build_cpu_s"], 1),
            RATIO: round(most["month_build_cpu_s"] / one["month_build_cpu_s"], 2),
            f"wall_{RATIO}": round(most["month_build_s"] / one["month_build_s"], 2)}


def spark_history(work: Path, config: Path, focus: Path, base: Path, months: int) -> dict:
    """The built demo month (`base`) with `months - 1` months of history before it, as a build
    of them all leaves it; then `focus` restated and the build that follows measured."""
    swh, duck = work / f"spark-history-{months}", work / f"spark-history-{months}.duckdb"
    shutil.copytree(base, swh)
    shutil.copy(work / "spark-base.duckdb", duck)
    t0 = time.perf_counter()
    if months > 1:
        spark_months_.add_history(swh, months, shifted)
    # one month too: its published file then names this warehouse, so every timed build is the
    # incremental one (a copy of the base's file names the base's folder: a full build)
    spark_months_.built_history(swh, duck, config, work)
    setup_s = time.perf_counter() - t0
    runs = []
    for _ in range(REPEAT):
        restate(focus)
        runs.append(spark_months_.child(config, swh, duck, [focus]))
    fastest = min(runs, key=lambda r: r["build_cpu_s"])
    assert all(r["rebuilt"] == [MONTH] and r["full"] is False for r in runs), [(r["rebuilt"], r["full"]) for r in runs]
    shutil.rmtree(swh, ignore_errors=True)
    return {"months_loaded": len(fastest["months"]), "history_setup_s": round(setup_s, 1),
            "month_build_cpu_s": round(fastest["build_cpu_s"], 1),
            "month_build_s": round(fastest["build_s"], 1), "runs_cpu_s": [round(r["build_cpu_s"], 1) for r in runs],
            "session_start_s": round(fastest["start_s"], 1), "restated_ingest_cpu_s": round(fastest["ingest_cpu_s"], 1),
            "rebuilt": fastest["rebuilt"], "slowest_models_s": {m: round(s, 1) for m, s in fastest["slowest_models"]},
            "peak_tree_mb": round(fastest["peak_mb"])}


def build_code(wh: Path, config: Path) -> str:
    return ("from pipelines.cli import main\n"
            f"main(['build', '--json', '--warehouse', {str(wh)!r}, '--config', {str(config)!r}], standalone_mode=False)")


if __name__ == "__main__":
    main()
