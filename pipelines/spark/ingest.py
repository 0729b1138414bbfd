"""`meterbook ingest --engine spark`: files into the Spark warehouse, with the rules of one machine.

Per file: hash it; content already loaded is `unchanged` and costs nothing more. Otherwise detect
the format; the bulk formats are staged by Spark (pipelines.spark.readers), the small ones
(CodeCarbon, disclosures, dmon logs, GCP, Azure and OCI exports, JSON lines) by their DuckDB
reader on the driver, in a scratch warehouse, and handed to Spark. Either way rows read =
loaded + rejected is asserted, rejects keep their row and check, and a newer delivery of the
same month replaces the older (pipelines.ingest.superseded, run over a driver-side copy of the
lineage). The source_files row is written last: it commits the file (pipelines.spark.storage).
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import duckdb

from core.sql import model_over
from pipelines.config import Config
from pipelines.ingest import BatchFile, FileResult, batch_from, expand, ingest_file, sha256_of, superseded, unchanged
from pipelines.spark.build import register_reference, run_model
from pipelines.spark.readers import REJECT_COLUMNS, SparkStaged, stage_billing, stage_prom_batch, stage_telemetry
from pipelines.spark.storage import FACTS, SparkStore, checkpoint, file_filter, known_empty, spark_schema
from pipelines.stage_inputs import apply_config, config_variables
from pipelines.warehouse import add_macros, create_tables
from sources import REGISTRY
from sources.base import detect, read_head
from sources.reference_data import load_reference
from sources.telemetry import SAMPLES_USED

BILLING_ON_SPARK = {"focus", "aws-cur", "aws-cur2"}
TELEMETRY_ON_SPARK = {"dcgm-prom", "prom-range", "prom-csv"}
# Small files of these kinds are staged many at once (pipelines.ingest.batch_from picks them):
# a file's own staging on Spark is a dozen jobs, seconds whatever its size.
BATCHED_ON_SPARK = {"dcgm-prom"}


def scratch_warehouse(store: SparkStore, config: Config) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB warehouse holding a copy of the Spark warehouse's lineage: the
    driver-side readers load into it, and supersede decisions read it."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    create_tables(con)
    add_macros(con)
    lineage = store.source_files()
    if not known_empty(lineage):   # a new warehouse's (no folder yet) is copied without a job
        con.register("_sf", lineage.toArrow())
        con.execute("insert into source_files by name select * from _sf")
        con.unregister("_sf")
    next_id = con.execute("select coalesce(max(file_id), 0) + 1 from source_files").fetchall()[0][0]
    con.execute(f"drop sequence file_id_seq; create sequence file_id_seq start {int(next_id)}")
    load_reference(con)
    apply_config(con, config)
    return con


def ingest(spark, store: SparkStore, paths: Iterable[str | Path], kind: str = "auto",
           options: dict[str, Any] | None = None, config: Config | None = None) -> list[FileResult]:
    config = config or Config()
    files, notes = expand(paths)
    register_reference(spark)
    con = scratch_warehouse(store, config)
    results: list[FileResult] = []
    this_run: set[int] = set()
    loaded = {r[0] for r in con.execute("select path from source_files where status = 'loaded'").fetchall()}
    i = 0
    while i < len(files):
        batch = batch_from(files, i, kind, options, loaded)
        done = ingest_batch(spark, store, con, batch, config, this_run) \
            if batch and batch[0].reader.kind in BATCHED_ON_SPARK else None
        if done is None:   # each on its own: all of a batch that cannot be staged as one (see pipelines.ingest)
            done = [ingest_one(spark, store, con, f, kind, options or {}, config, this_run)
                    for f in files[i:i + max(len(batch), 1)]]
        for f, res in zip(files[i:], done):
            res.notes = notes.get(f, []) + res.notes
        results += done
        i += len(done)
    return results


def ingest_batch(spark, store: SparkStore, con, batch: list[BatchFile], config: Config,
                 this_run: set[int]) -> list[FileResult] | None:
    """Small files of one kind staged as one (readers.stage_prom_batch), each still with its own
    sha256, file id, source_files row, counts and totals, as its own ingest would record it;
    their rows in one write per table, their source_files rows in one commit. None, with nothing
    written, where the files must be ingested one by one (what only a file's own staging
    decides: a reject, content already loaded, a file Spark cannot read)."""
    shas = [sha256_of(b.path) for b in batch]
    if len(set(shas)) < len(shas) or any(unchanged(con, b.path, str(b.path.resolve()), sha) for b, sha in zip(batch, shas)):
        return None
    first = con.execute("select nextval('file_id_seq') from range(?)", [len(batch)]).fetchall()
    file_ids = [int(r[0]) for r in first]
    staged = stage_prom_batch(spark, [b.head for b in batch], file_ids)
    if staged is None:
        # the ids go back unused: the files' own ingests take them in the same order
        con.execute(f"drop sequence file_id_seq; create sequence file_id_seq start {file_ids[0]}")
        return None
    for table, df in staged.facts.items():
        store.write_fact(table, df)
    totals = batch_totals(spark, store, file_ids, {i: loaded for i, (_, loaded) in staged.counts.items()}, config)
    results = []
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    for b, sha, file_id in zip(batch, shas, file_ids):
        rows_read, loaded = staged.counts[file_id]
        version = b.reader.sniff(b.head) or b.reader.kind
        con.execute("insert into source_files values (?, ?, ?, ?, ?, ?, ?, 0, 'loaded', ?, null, null, ?)",
                    [file_id, str(b.path.resolve()), sha, b.reader.kind, version, rows_read, loaded, now, json.dumps(totals[file_id])])
        results.append(FileResult(str(b.path), sha, b.reader.kind, version, "loaded", rows_read, loaded, 0, totals[file_id], []))
    commit(spark, store, con, file_ids)
    this_run.update(file_ids)
    return results


def batch_totals(spark, store: SparkStore, file_ids: list[int], loaded: dict[int, int], config: Config) -> dict[int, dict[str, Any]]:
    """telemetry_totals of each file of a batch, from the parts just written: one run of the
    int_gpu_hours model for every file's energy, each file's GPUs taken apart by their UUIDs
    prefixed with its id (the model groups and orders by GPU, so a file's total is its own)."""
    parts = store._read("facts", "gpu_hour_parts").where(file_filter(file_ids))
    parts.createOrReplaceTempView("_batch_parts")
    model = model_over("20_intermediate", "int_gpu_hours.sql", {
        "gpu_hour_parts": "select * replace (file_id::varchar || ':' || gpu_uuid as gpu_uuid) from _batch_parts"})
    # plain checkpoints, not the build's counted ones (storage.counted_checkpoint): broadcasting a
    # small kept CTE pays where a join would shuffle a mart's every line; over a file's parts it
    # adds a job per file (22 instead of 20 for a small dcgm-exporter file)
    hours = run_model(spark, model, config_variables(config), "_batch_gpu_hours", checkpoint)
    figures = part_figures(spark, "_batch_parts", hours, "cast(substring_index(gpu_uuid, ':', 1) as int)")
    return {i: telemetry_figures(loaded[i], *figures.get(i, (0, 0, 0.0))) for i in file_ids}


def part_figures(spark, parts: str, hours, file_of_hour: str) -> dict[int, tuple[int, int, float]]:
    """Per file id of the parts (view `parts`): its GPUs, samples used and energy by the
    int_gpu_hours model (`hours`, whose rows' file id is `file_of_hour`), in one job: the two
    aggregates side by side in one query, not a collect each."""
    hours.createOrReplaceTempView("_part_hours")
    rows = spark.sql(f"""
        select file_id, max(gpus), max(used), max(energy_kwh) from (
            select file_id, count(distinct gpu_uuid) as gpus, sum({SAMPLES_USED}) as used, null as energy_kwh
            from {parts} group by file_id
            union all
            select {file_of_hour} as file_id, null, null, sum(energy_kwh) from _part_hours group by 1)
        group by file_id""").collect()
    return {r[0]: (int(r[1] or 0), int(r[2] or 0), float(r[3] or 0)) for r in rows}


def telemetry_figures(loaded: int, gpus: int, used: int, energy_kwh: float) -> dict[str, Any]:
    """A telemetry file's totals, as TelemetryReader.totals plus the ingest runner's energy."""
    return {"gpus": gpus, "samples": loaded, "samples_used": used, "samples_other_metrics": loaded - used,
            "energy_kwh": energy_kwh}


def ingest_one(spark, store: SparkStore, con, path: Path, kind: str, options: dict[str, Any], config: Config,
               this_run: set[int]) -> FileResult:
    head = read_head(path)
    reader, version = detect(head, kind)
    if reader.kind not in BILLING_ON_SPARK | TELEMETRY_ON_SPARK:
        return on_driver(store, con, path, kind, options, this_run)
    sha = sha256_of(path)
    resolved = str(path.resolve())
    if done := unchanged(con, path, resolved, sha):
        return done
    if reader.kind in BILLING_ON_SPARK:
        staged = stage_billing(spark, head, reader, options)
    else:
        staged = stage_telemetry(spark, head, reader, options, config_variables(config))
    rejected = staged.rows_rejected
    if staged.rows_loaded + rejected != staged.rows_read:
        raise RuntimeError(f"{path}: {staged.rows_read} rows read but {staged.rows_loaded} loaded + {rejected} rejected")
    file_id = con.execute("select nextval('file_id_seq')").fetchall()[0][0]
    same_table = [k for k, r in REGISTRY.items() if r.table == reader.table]
    replaced = superseded(con, resolved, same_table, staged.delivery_key, this_run)
    from pyspark.sql import functions as F
    for table, df in staged.facts.items():
        store.write_fact(table, df.withColumn("file_id", F.lit(file_id).cast("int")))
    # a table known to get no rows (no rejects, no findings) is not written: its write would be
    # a job, and a file id's missing partition reads as none
    for table, df in (("rejects", staged.rejects), ("findings", staged.findings), ("row_findings", staged.row_findings)):
        if df is not None and not known_empty(df):
            store.write_lineage(table, df.withColumn("file_id", F.lit(file_id).cast("int")))
    totals = staged.totals
    if reader.table == "gpu_hour_parts":
        totals = telemetry_totals(spark, store, file_id, staged.rows_loaded, config)
    notes = list(staged.notes) + [f"replaces file_id {old} ({why})" for old, _, why in replaced]
    version = staged.format_version or version
    row = (file_id, resolved, sha, reader.kind, version, staged.rows_read, staged.rows_loaded, rejected,
           datetime.now(timezone.utc).replace(tzinfo=None), staged.delivery_key, json.dumps(totals))
    con.execute("insert into source_files values (?, ?, ?, ?, ?, ?, ?, ?, 'loaded', ?, ?, null, ?)", list(row))
    for old, _, _ in replaced:
        con.execute("update source_files set status = 'replaced', replaced_by = ? where file_id = ?", [file_id, old])
    # one write for the new file's row and the rows it replaces: the commit of both
    commit(spark, store, con, [file_id, *[old for old, _, _ in replaced]])
    for old, _, _ in replaced:
        store.drop_file(old)
    this_run.add(file_id)
    return FileResult(str(path), sha, reader.kind, version, "loaded", staged.rows_read, staged.rows_loaded, rejected,
                      totals, notes)


def commit(spark, store: SparkStore, con, file_ids: list[int]) -> None:
    """Write these files' source_files rows (the commit point of their data)."""
    rows = con.sql("select * from source_files where list_contains(?, file_id)", params=[file_ids]).to_arrow_table()
    store.write_lineage("source_files", spark.createDataFrame(rows, spark_schema("source_files")))


def telemetry_totals(spark, store: SparkStore, file_id: int, loaded: int, config: Config) -> dict[str, Any]:
    """As TelemetryReader.totals plus the ingest runner's energy: GPUs, samples (`loaded`, as
    the staging counted them), and the file's energy by the int_gpu_hours model itself over
    this file's parts."""
    parts = store._read("facts", "gpu_hour_parts").where(file_filter([file_id]))
    parts.createOrReplaceTempView("_file_parts")
    model = model_over("20_intermediate", "int_gpu_hours.sql", {"gpu_hour_parts": "select * from _file_parts"})
    hours = run_model(spark, model, config_variables(config), "_file_gpu_hours", checkpoint)   # as batch_totals
    figures = part_figures(spark, "_file_parts", hours, str(int(file_id)))
    return telemetry_figures(loaded, *figures.get(file_id, (0, 0, 0.0)))


def on_driver(store: SparkStore, con, path: Path, kind: str, options: dict[str, Any], this_run: set[int]) -> FileResult:
    """A small format: the DuckDB reader on the driver, into the scratch warehouse; its rows,
    rejects and findings then go to the Spark warehouse under the same file id."""
    spark = store.spark
    res = ingest_file(con, path, kind, options, this_run)
    if res.status != "loaded":
        return res
    file_id = con.execute("select file_id from source_files where sha256 = ? and status = 'loaded'", [res.sha256]).fetchall()[0][0]
    for table in (*FACTS, "rejects", "row_findings", "findings"):
        rows = con.sql(f"select * from {table} where file_id = ?", params=[file_id]).to_arrow_table()
        if rows.num_rows == 0:
            continue
        df = spark.createDataFrame(rows, spark_schema(table))
        (store.write_fact if table in FACTS else store.write_lineage)(table, df)
    replaced = [r[0] for r in con.execute("select file_id from source_files where replaced_by = ?", [file_id]).fetchall()]
    commit(spark, store, con, [file_id, *replaced])
    for old in replaced:
        store.drop_file(old)
    return res


__all__ = ["ingest", "REJECT_COLUMNS", "SparkStaged"]
