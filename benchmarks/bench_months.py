"""A month's build against the warehouse's history: the demo month restated and built again
with 1, 12 and 36 months loaded (MB_BENCH_HISTORY, comma-separated). Target: the build at the
longest history within 1.3x of the build with the month alone.

History is the demo month's loaded rows copied into earlier months (timestamps and periods moved
back, each copy its own files, runs and jobs), so every month is as large as the demo month and
the build cannot tell a copy from a delivery. Each warehouse is built once in full; then the
demo month's FOCUS delivery is restated (one cost changed, the same file loaded again) and the
build that follows is timed, MB_BENCH_REPEAT times, the fastest counting.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

import duckdb

from benchmarks.common import BENCH_DIR, REPEAT, measure, report, target
from pipelines.month_scope import BILLING_FILE_TABLES, MONTH_EXPR, ROW_MONTHS

HISTORY = tuple(int(h) for h in os.environ.get("MB_BENCH_HISTORY", "1,12,36").split(","))
MONTH = "2026-10"
INPUTS = ("billing", "dcgm", "codecarbon", "invoices", "work")
MONTH_TEXT = frozenset({"period", "usage_month", "rate_month"})     # months written as YYYY-MM
RENAMED = frozenset({"run_key", "run_id", "job_id"})   # a copy's runs and jobs are other runs and jobs


def cli(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], check=True, capture_output=True, text=True).stdout


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
    shutil.rmtree(work, ignore_errors=True)
    one, most = figures[str(HISTORY[0])], figures[str(HISTORY[-1])]
    ratio = most["month_build_s"] / one["month_build_s"]
    report("months", {"history": figures, f"month_build_{HISTORY[-1]}_over_{HISTORY[0]}": round(ratio, 2)})
    target("months", f"a month's build, {HISTORY[-1]} months loaded / {HISTORY[0]}", ratio, 1.3)


def build_code(wh: Path, config: Path) -> str:
    return ("from pipelines.cli import main\n"
            f"main(['build', '--json', '--warehouse', {str(wh)!r}, '--config', {str(config)!r}], standalone_mode=False)")


if __name__ == "__main__":
    main()
