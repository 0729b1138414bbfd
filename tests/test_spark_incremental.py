"""A Spark build rebuilds only the months whose inputs changed.

Three demo months are ingested into a Spark warehouse and built; then a late telemetry file
lands in September (a host the first load missed). The next build rebuilds September alone:
no mart file of August is rewritten (same files, same bytes, same mtimes), nor any of October's
but team_month's comparison with September; the published figures of August and October are
the ones they were, and every month equals a Spark warehouse loaded with the same files and
built once. A build with nothing changed writes no mart file.
"""
from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import duckdb
import pytest

from pipelines.config import load_config
from pipelines.demo import write_demo
from pipelines.month_scope import PREVIOUS_MONTH_TABLES
from pipelines.progress import BuildProgress
from pipelines.spark import engine as spark_engine
from pipelines.spark.storage import SparkStore
from pipelines.stages import MARTS, UNDATED_MARTS
from tests.test_incremental_months import PREVIOUS_MONTH_COLUMNS, late_scrapes

MONTHS = ("2026-08", "2026-09", "2026-10")
FOLDERS = ("billing", "telemetry", "codecarbon")
DATED_MARTS = [m for m in MARTS if m not in ("contract_findings", *UNDATED_MARTS)]


def demo_month(out: Path, month: str) -> None:
    """A demo month sampled every 5 minutes, its scrapes in one file (each file costs Spark jobs)."""
    write_demo(out, month, interval_s=300)
    (out / "telemetry").mkdir()
    (out / "telemetry" / "all.prom").write_text("".join(p.read_text() for p in sorted((out / "dcgm").rglob("*.prom"))))


def mart_files(warehouse: Path, month: str) -> dict[str, tuple[str, int]]:
    """Every mart file of a month: its sha256 and mtime."""
    return {str(p.relative_to(warehouse)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted((warehouse / "marts").glob(f"*/month={month}/*")) if p.is_file()}


def published(duck: Path, month: str, skip: tuple[str, ...] = ()) -> dict[str, list]:
    """Every dated mart's rows of a month as published (the previous-month tables less `skip`)."""
    with duckdb.connect(str(duck), read_only=True) as con:
        return {m: con.execute(f"select {'* exclude (' + ', '.join(skip) + ')' if skip and m in PREVIOUS_MONTH_TABLES else '*'} "
                               f"from {m} where month = ? order by all", [month]).fetchall() for m in DATED_MARTS}


def build(store: SparkStore, config, duck: Path) -> dict:
    progress = BuildProgress()
    start = time.monotonic()
    rebuilt = spark_engine.build(store, config, duck, progress)
    return {"rebuilt": rebuilt, "full": progress.scope.full, "patched": progress.patched, "s": time.monotonic() - start}


@pytest.fixture(scope="module")
def warehouses(spark, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("spark_incremental")
    for month in MONTHS:
        demo_month(root / month, month)
    config = load_config(root / MONTHS[-1] / "meterbook.toml")
    late = late_scrapes(root / "2026-09" / "dcgm", root / "late")
    wh, fresh_wh = root / "wh", root / "fresh"
    store, fresh = SparkStore(spark, str(wh)), SparkStore(spark, str(fresh_wh))
    # the three months in one ingest (its fixed jobs paid once), month by month: each month's
    # single telemetry file staged on its own as before (three batched as one cost more)
    start = time.monotonic()
    spark_engine.ingest(store, [root / month / f for month in MONTHS for f in FOLDERS], "auto", {}, config)
    ingest_s = time.monotonic() - start
    first = build(store, config, root / "wh.duckdb")
    files = {m: mart_files(wh, m) for m in MONTHS}
    figures = {m: published(root / "wh.duckdb", m, PREVIOUS_MONTH_COLUMNS) for m in MONTHS}
    spark_engine.ingest(store, [late], "auto", {}, config)
    # the same files loaded (the same file ids), never built: a copy of what was ingested
    shutil.copytree(wh, fresh_wh, ignore=lambda d, names: {"marts", "build", "state"} if d == str(wh) else set())
    second = build(store, config, root / "wh.duckdb")
    # the ledger the models joined, as that build registered it
    second["ledger_files"] = spark.table("source_files").inputFiles()
    files_after = {m: mart_files(wh, m) for m in MONTHS}
    third = build(store, config, root / "wh.duckdb")
    scratch = build(fresh, config, root / "fresh.duckdb")
    print(f"\nSpark ingest, {len(MONTHS)} months: {ingest_s:.1f} s; build: {first['s']:.1f} s; September rebuilt: {second['s']:.1f} s; "
          f"nothing changed: {third['s']:.1f} s; from scratch with the late file: {scratch['s']:.1f} s")
    yield {"root": root, "wh": wh, "first": first, "second": second, "third": third, "files": files,
           "files_after": files_after, "figures": figures}
    shutil.rmtree(root, ignore_errors=True)


def test_the_first_build_builds_every_month(warehouses):
    assert warehouses["first"]["full"] and warehouses["first"]["rebuilt"] == list(MONTHS)


def test_a_late_file_rebuilds_its_month_alone(warehouses):
    second = warehouses["second"]
    assert second["rebuilt"] == ["2026-09"] and not second["full"]
    assert second["patched"] == ["2026-10"]   # October's comparison with September
    assert warehouses["third"]["rebuilt"] == [] and not warehouses["third"]["full"]


def test_a_months_build_opens_no_ledger_file(warehouses):
    """source_files (a folder per file ever loaded) reaches the models from the driver, which read
    it to plan the build: Spark opens none of its files, however long the history."""
    assert warehouses["second"]["ledger_files"] == []


def test_other_months_partitions_are_not_rewritten(warehouses):
    before, after = warehouses["files"], warehouses["files_after"]
    assert before["2026-08"] and after["2026-08"] == before["2026-08"]
    kept = {p: f for p, f in before["2026-10"].items() if p.split("/")[1] not in PREVIOUS_MONTH_TABLES}
    assert kept and {p: f for p, f in after["2026-10"].items() if p.split("/")[1] not in PREVIOUS_MONTH_TABLES} == kept
    # September's were, and a build with nothing changed rewrites nothing
    assert set(after["2026-09"].values()).isdisjoint(before["2026-09"].values())
    assert {m: mart_files(warehouses["wh"], m) for m in MONTHS} == after


def test_other_months_figures_are_unchanged(warehouses):
    duck = warehouses["root"] / "wh.duckdb"
    for month in ("2026-08", "2026-10"):
        assert published(duck, month, PREVIOUS_MONTH_COLUMNS) == warehouses["figures"][month]
    assert published(duck, "2026-09")["telemetry_month"] != warehouses["figures"]["2026-09"]["telemetry_month"]


def _rounded(rows: list) -> list:
    # doubles summed in another order differ in their last bits
    return sorted((tuple(float(f"{v:.10g}") if isinstance(v, float) else v for v in r) for r in rows), key=repr)


@pytest.mark.parametrize("month", MONTHS)
def test_incremental_equals_a_build_from_scratch(warehouses, month):
    got, want = published(warehouses["root"] / "wh.duckdb", month), published(warehouses["root"] / "fresh.duckdb", month)
    assert {m: _rounded(r) for m, r in got.items()} == {m: _rounded(r) for m, r in want.items()}
