"""A build of some months reads the folders of those months alone for a table dated by month
(and telemetry's, with the months of the GPU-hours it reads across a boundary): the warehouse's
other months are never listed, so the month's inputs cost the same whatever history lies
beside them. A table read by file, and a full build, read the whole table. The rows the views
hold are the rows the full read cut to the scope gave."""
from __future__ import annotations

import uuid
from datetime import datetime

import pytest

from pipelines.spark.storage import InputScope, SparkStore, duck_shapes, spark_type

OCT, NOV = "2026-10", "2026-11"


@pytest.fixture(scope="module")
def store(spark, tmp_path_factory):
    store = SparkStore(spark, str(tmp_path_factory.mktemp("scoped") / "spark-warehouse"))
    for file_id, month, hour in ((1, OCT, "2026-10-31 23:00:00"), (2, NOV, "2026-11-01 00:00:00")):
        store.write_fact("grid_hours", spark.sql(f"select {file_id} as file_id, 'DE' as zone, timestamp_ntz'{hour}' as hour_start"))
        store.write_fact("gpu_hour_parts", spark.sql(f"select {file_id} as file_id, 'g' as gpu_uuid, timestamp_ntz'{hour}' as hour_start"))
        store.write_fact("runs", spark.sql(f"select {file_id} as file_id, 'r{month}' as run_id, timestamp_ntz'{hour}' as end_utc"))
    cols = [f"cast({'status' if c == 'status' else 'file_id' if c == 'file_id' else 'null'} as {spark_type(t)}) as `{c}`"
            for c, t in duck_shapes()["source_files"]]
    store.write_lineage("source_files", spark.sql("select id as file_id, 'loaded' as status from values (1), (2) as t(id)").selectExpr(*cols))
    return store


def months_of(spark, table: str) -> set[str]:
    """The month folders a registered view's files lie in (listed when it was read: no job)."""
    return {part.removeprefix("month=") for f in spark.table(table).inputFiles() for part in f.split("/") if part.startswith("month=")}


def rows(spark, table: str) -> list:
    return sorted(spark.table(table).collect(), key=repr)


def test_a_month_reads_no_folder_of_another_month(spark, store):
    store.register_inputs(InputScope([NOV]))
    assert months_of(spark, "grid_hours") == {NOV}
    assert months_of(spark, "gpu_hour_parts") == {NOV}
    assert months_of(spark, "runs") == {OCT, NOV}   # read by file: whole
    assert [r.file_id for r in rows(spark, "grid_hours")] == [2]


def test_telemetry_reads_the_months_of_the_hours_across_the_boundary(spark, store):
    store.register_inputs(InputScope([NOV], hours=[("g", datetime(2026, 10, 31, 23))]))
    assert months_of(spark, "gpu_hour_parts") == {OCT, NOV}
    assert months_of(spark, "grid_hours") == {NOV}
    assert [r.file_id for r in rows(spark, "gpu_hour_parts")] == [1, 2]


def test_a_table_read_by_file_lists_those_files_folders_alone(spark, store):
    """runs of November's file: October's folders (the history) are not listed, its rows not read."""
    store.register_inputs(InputScope([NOV], files={"runs": [2]}))
    assert months_of(spark, "runs") == {NOV}
    assert [r.run_id for r in rows(spark, "runs")] == [f"r{NOV}"]
    store.register_inputs(InputScope([NOV], files={"runs": []}))
    assert rows(spark, "runs") == []


def test_a_month_with_no_folder_reads_nothing(spark, store):
    store.register_inputs(InputScope(["2026-12"]))
    assert rows(spark, "grid_hours") == [] and spark.table("grid_hours").columns == [c for c, _ in duck_shapes()["grid_hours"]]


def test_a_full_build_reads_every_month(spark, store):
    store.register_inputs()
    assert months_of(spark, "grid_hours") == months_of(spark, "gpu_hour_parts") == {OCT, NOV}
    full = rows(spark, "grid_hours")
    store.register_inputs(InputScope([OCT]))
    assert rows(spark, "grid_hours") == [r for r in full if r.hour_start.month == 10]


def jobs_run(spark, work) -> int:
    """The Spark jobs `work` started (in this thread), in a job group of its own."""
    sc = spark.sparkContext
    group = f"counted-{uuid.uuid4()}"
    sc.setJobGroup(group, "jobs a step starts")
    try:
        work()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return len(sc.statusTracker().getJobIdsForGroup(group))


def test_the_ledger_read_on_the_driver_spares_its_job(spark, store):
    """A build passes the loaded files' ids it read on the driver: registering the inputs then
    runs no job, where reading them from source_files (a partition per file ever loaded) runs one."""
    assert jobs_run(spark, lambda: store.register_inputs(InputScope([NOV]))) >= 1
    assert jobs_run(spark, lambda: store.register_inputs(InputScope([NOV]), loaded=[1, 2])) == 0
    assert [r.file_id for r in rows(spark, "grid_hours")] == [2]
    store.register_inputs(InputScope([NOV]), loaded=[1])   # file 2 replaced: its rows are not read
    assert rows(spark, "grid_hours") == []


def test_the_ledger_rows_read_on_the_driver_open_no_file(spark, store):
    """source_files as the driver read it (engine.scope_db) is the view the models join: an inline
    table, whose folders (one a file ever loaded) are never listed nor opened, with the rows
    Spark's read of them gives."""
    from_files = sorted(store.source_files().collect(), key=repr)
    ledger = {"source_files": [tuple(r) for r in from_files]}
    assert jobs_run(spark, lambda: store.register_inputs(InputScope([NOV]), loaded=[1, 2], ledger=ledger)) == 0
    assert spark.table("source_files").inputFiles() == []
    assert jobs_run(spark, lambda: spark.table("source_files").collect()) == 0
    assert rows(spark, "source_files") == from_files


def test_a_ledger_passes_inline_only_up_to_its_bound():
    """The driver hands Spark a ledger table inline only while it is short (its SQL text grows
    with its rows): one more row than the bound and Spark reads it from its folders instead."""
    import duckdb

    from pipelines.spark.engine import LEDGER_READ, inline_ledger
    con = duckdb.connect()
    cols = ", ".join(f'{"file_id" if c == "file_id" else "null"}::{t} as "{c}"' for c, t in duck_shapes()["source_files"])
    con.execute(f"create table source_files as select {cols} from range(1, 4) r(file_id)")
    assert LEDGER_READ == ["source_files"]
    assert [r[0] for r in inline_ledger(con, 3)["source_files"]] == [1, 2, 3]
    assert inline_ledger(con, 2) == {}


def jvm_calls(spark, work) -> int:
    """The calls into the JVM `work` makes (py4j commands sent from this process), less the
    releases of Python's collected proxies (py4j's memory-delete command), which earlier tests'
    garbage sends whenever the collector runs."""
    from py4j.protocol import MEMORY_COMMAND_NAME, MEMORY_DEL_SUBCOMMAND_NAME
    client = spark.sparkContext._gateway._gateway_client
    sent = client.send_command
    calls = [0]
    release = MEMORY_COMMAND_NAME + MEMORY_DEL_SUBCOMMAND_NAME

    def counted(command, *args, **kwargs):
        calls[0] += not str(command).startswith(release)
        return sent(command, *args, **kwargs)

    client.send_command = counted
    try:
        work()
    finally:
        del client.send_command
    return calls[0]


def test_registering_the_inputs_costs_no_jvm_call_per_file_loaded(spark, store):
    """Every file ever loaded is in the loaded ids a build passes: registering the fact tables
    makes about as many calls into the JVM with a thousand more of them as with two (py4j's
    releases of collected objects vary a little), not calls for each id."""
    few = jvm_calls(spark, lambda: store.register_inputs(InputScope([NOV]), loaded=[1, 2]))
    many = jvm_calls(spark, lambda: store.register_inputs(InputScope([NOV]), loaded=[1, 2, *range(10, 1010)]))
    assert many - few < 1000, (few, many)
    assert [r.file_id for r in rows(spark, "grid_hours")] == [2]


def test_a_month_written_is_read_back_from_its_folder_alone(spark, store):
    """A mart's months written by a build of some months are read back (for the models after it)
    from their folders alone: the mart's other months, its history, are not listed."""
    mart = "team_month_scoped_test"
    frame = spark.sql(f"select * from values ('a', 1, '{OCT}'), ('b', 2, '{NOV}') as t(team, n, month)")
    store.write_mart(mart, frame)
    stored = store.write_mart(mart, spark.sql(f"select 'c' as team, 3 as n, '{NOV}' as month"), [NOV])
    assert {part for f in stored.inputFiles() for part in f.split("/") if part.startswith("month=")} == {f"month={NOV}"}
    assert sorted(tuple(r) for r in stored.collect()) == [("c", 3, NOV)]
    assert store.read_months(mart, [OCT]).collect()[0].team == "a"
    assert store.read_months(mart, ["2026-12"], frame.schema).collect() == []
