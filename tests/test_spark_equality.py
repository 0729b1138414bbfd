"""Spark gives DuckDB's figures: the demo month, a second month and a restated delivery, ingested
and built by both engines (`--engine spark` on local[2]); every mart equal row for row, keys
exactly, amounts to the cent, energy to the watt-hour, CO2e to the gram.

Telemetry is sampled every 5 minutes (not the demo's 30 s) to keep the Spark part short; the
config still says 30 s, so every scrape boundary is a counter gap: the gap and reset logic of
int_gpu_hours.sql runs on every hour, which is the hardest part to carry across engines.
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.vocabulary import CENT_PLACES, G_PLACES, MILLI_HOUR_PLACES, WH_PLACES
from pipelines.cli import main
from pipelines.config import load_config
from pipelines.demo import write_demo
from pipelines.ingest import ingest as duck_ingest
from pipelines.spark import engine as spark_engine
from pipelines.spark.storage import FACTS, SparkStore, duck_shapes
from pipelines.stages import MARTS, run_stages
from pipelines.warehouse import connect

MONTHS = ("2026-10", "2026-11")
# Tolerance per column by unit suffix: half the quantum the issue names (a cent, a Wh, a gram).
# Half the quantum a meter is reported in (core.vocabulary), by what a column's name ends or holds
QUANTUM = [(key, 10.0 ** -places / 2) for keys, places in (
    (("_kwh",), WH_PLACES), (("_kg",), G_PLACES), (("cost", "amount", "usd"), CENT_PLACES),
    (("_h", "hours"), MILLI_HOUR_PLACES),
    # units of work are counted whole (a job's tokens are split between months and teams by
    # share, summed as decimals: 5e10 tokens may come out 5e10 less one ulp on one engine)
    (("tokens", "samples", "requests"), 0)) for key in keys]


# The demo folders both engines ingest (telemetry: the dcgm scrapes joined into fewer files);
# billing/ holds the EUR account's exchange rates; slurm/ the on-premises cluster's sacct export
# and an hour of its nodes' telemetry (its cost pool, jobs and unallocated capacity).
FOLDERS = ("billing", "invoices", "telemetry", "codecarbon", "disclosures", "work", "grid", "instruments", "slurm")
# The on-premises cluster's marts the comparison must find filled, as the cloud's are
CLUSTER_ROWS = {
    "cluster_job_month": "select count(*) from cluster_job_month",
    "team_month": "select count(*) from team_month where unallocated_capacity_gpu_hours > 0",
    "reconciliation": "select count(*) from reconciliation where basis = 'cost pool'",
    "allocation_lines": "select count(*) from allocation_lines where resource_id like 'hpc-lab:%'",
}
FILLED = ("charges", "charge_source_columns", "gpu_hour_parts", "gpu_pod_parts", "gpu_request_parts", "runs",
          "disclosures", "invoices", "work_log", "grid_hours", "instruments", "provider_carbon", "exchange_rates",
          "slurm_jobs")
# Columns of one engine's own loading, read by no model: the line item key's hash the DuckDB
# in-place CUR load checks for repeats (sources.billing_in_place); Spark leaves it null
ENGINE_COLUMNS = {"line_item_hash"}


def inputs(root: Path) -> list[list[Path]]:
    """Three ingests: month one, month two, then month one's CUR restated in a later delivery."""
    batches = []
    for i, month in enumerate(MONTHS):
        out = root / month
        write_demo(out, month, interval_s=300)
        if i == 0:   # the config (read for both months) left at 30 s: the telemetry_interval finding, on both engines
            toml = out / "meterbook.toml"
            toml.write_text(toml.read_text().replace("interval_s = 300", "interval_s = 30"))
        # fewer, larger telemetry files (each costs Spark a few jobs): month one in one file,
        # month two in two (one host, then the others: several telemetry files in one ingest)
        hosts = sorted((out / "dcgm").iterdir())
        groups = {"all": sorted((out / "dcgm").rglob("*.prom"))} if i == 0 else \
            {"first-host": sorted(hosts[0].glob("*.prom")), "other-hosts": sorted(p for h in hosts[1:] for p in h.glob("*.prom"))}
        tel = out / "telemetry"
        tel.mkdir()
        for name, files in groups.items():
            (tel / f"{name}.prom").write_text("".join(f.read_text() for f in files))
        shutil.rmtree(out / "dcgm")
        batches.append([out / name for name in FOLDERS])
    # the clouds' own carbon figures for month one (provider_carbon_reconciliation)
    batches[0].append(Path(__file__).parent / "data" / "provider_carbon" / "aws_carbon_emissions_demo_2026-10.csv")
    cur = next((root / MONTHS[0] / "billing").glob("cur-*.csv"))
    restated = root / "restated" / cur.name
    restated.parent.mkdir()
    lines = cur.read_text().splitlines(keepends=True)
    # AWS restates a month by delivering it again: one line's cost changed, everything else equal
    header = lines[0].split(",")
    cost = header.index("lineItem/UnblendedCost")
    fields = lines[1].split(",")
    fields[cost] = str(Decimal(fields[cost]) + Decimal("12.34"))
    restated.write_text("".join([lines[0], ",".join(fields), *lines[2:]]))
    batches.append([restated])
    return batches


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark_equality")
    batches = inputs(root / "in")
    config = load_config(root / "in" / MONTHS[0] / "meterbook.toml")
    duck = connect(root / "duck.duckdb")
    for batch in batches:
        duck_ingest(duck, batch, config=config)
    run_stages(duck, config)
    # the Spark side through the command line, as a user runs it (the shared session is reused)
    toml = str(root / "in" / MONTHS[0] / "meterbook.toml")
    spark_opts = ["--engine", "spark", "--spark-warehouse", str(root / "spark-warehouse"), "--config", toml]
    results = []
    for batch in batches:
        res = CliRunner().invoke(main, ["ingest", *map(str, batch), "--json", *spark_opts])
        assert res.exit_code == 0, res.output + repr(res.exception)
        results.append(json.loads(res.stdout)["files"])
    res = CliRunner().invoke(main, ["build", "--warehouse", str(root / "published.duckdb"), *spark_opts])
    assert res.exit_code == 0, res.output + repr(res.exception)
    store = SparkStore(spark, str(root / "spark-warehouse"))
    # as the CLI opened it (one DuckDB instance per file and configuration in a process)
    published = connect(root / "published.duckdb")
    yield {"duck": duck, "spark": published, "results": results, "store": store, "root": root}
    published.close()
    duck.close()


def test_a_scrape_interval_the_config_does_not_say_is_found_alike(built):
    """Readings every 300 s under a 30 s setting: each engine finds it in both months, worded alike
    (the finding is compared with every other row of findings_month below; here, that it is there)."""
    found = [sorted(con.execute("select month, subject, value, detail from findings_month "
                                "where finding = 'telemetry_interval'").fetchall()) for con in (built["duck"], built["spark"])]
    assert tuple(m for m, *_ in found[0]) == MONTHS and found[0] == found[1]
    assert all(re.match(r"\d+ of \d+ GPUs were read about every [1-3]\d\d s, not every 30 s as configured", d) for *_, d in found[0])


def tolerance(column: str) -> float:
    return next((q for suffix, q in QUANTUM if suffix in column), 1e-9)


def rows(con, table: str) -> tuple[list[str], list[tuple]]:
    """A table's rows, a file named by its sha256: file_id is each warehouse's surrogate key, and
    DuckDB's sequence skips the ids a batch took before it fell back to file-by-file staging."""
    cur = con.execute(f"select * from {table}")
    cols = [d[0] for d in cur.description]
    found = cur.fetchall()
    if "file_id" not in cols or table == "source_files":
        return cols, found
    sha = dict(con.execute("select file_id, sha256 from source_files").fetchall())
    i = cols.index("file_id")
    return cols, [(*r[:i], sha.get(r[i], r[i]), *r[i + 1:]) for r in found]


def comparable(v):
    """One form for both engines' values: decimals as floats, JSON text parsed, structs as sorted items, lists of
    scalars as sorted (their order is the models' choice only where they say `order by`, and
    those are lists of structs here), lists of structs in their order."""
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, str) and v[:1] in ("[", "{"):
        # JSON text (a line's allocations, its method details): its numbers are shares summed in
        # each engine's order, compared as numbers like the columns' (not as digits)
        try:
            return comparable(json.loads(v))
        except ValueError:
            return v
    if isinstance(v, dict):
        return tuple(sorted((k, comparable(x)) for k, x in v.items()))
    if isinstance(v, list):
        items = [comparable(x) for x in v if x is not None]
        return items if any(isinstance(x, tuple) for x in items) else sorted(items, key=repr)
    return v


def has_float(v) -> bool:
    if isinstance(v, (list, tuple)):
        return any(has_float(x) for x in v)
    return isinstance(v, float)


def key_of(cols: list[str], row: tuple) -> tuple:
    """Every value without a float in it (text, integers, timestamps, lists of ids): what
    identifies a row; numbers are compared apart, within their quantum."""
    return tuple(repr(comparable(v)) for v in row if not has_float(comparable(v)))


def same(a, b, tol: float) -> bool:
    """Equal values, floats within `tol` (both NaN counts as equal), nested ones item by item."""
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return False
        return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("mart", [m for m in MARTS if m != "contract_findings"])
def test_every_mart_equals_duckdbs(built, mart):
    dcols, drows = rows(built["duck"], mart)
    scols, srows = rows(built["spark"], mart)
    assert scols == dcols
    assert len(srows) == len(drows), mart
    assert drows, f"{mart} is empty: the comparison would prove nothing"
    assert_same_rows(mart, dcols, drows, srows)


def assert_same_rows(table: str, cols: list[str], drows: list, srows: list) -> None:
    """Each DuckDB row has a Spark twin: the same key (key_of), numbers within their quantum."""
    by_key: dict[tuple, list] = {}
    for r in srows:
        by_key.setdefault(key_of(cols, r), []).append(r)
    for r in drows:
        k = key_of(cols, r)
        assert by_key.get(k), f"{table}: a DuckDB row has no Spark twin: {dict(zip(cols, r))}"
        twin = by_key[k].pop()
        for c, a, b in zip(cols, r, twin):
            a, b = comparable(a), comparable(b)
            assert same(a, b, tolerance(c)), (table, c, a, b, dict(zip(cols, r)))


def test_contracts_find_the_same_on_both(built):
    assert rows(built["spark"], "contract_findings")[1] == rows(built["duck"], "contract_findings")[1]


def test_lineage_is_the_same(built):
    """Per file: the same counts read, loaded and rejected, and the restated CUR replaced."""
    q = ("select kind, status, rows_read, rows_loaded, rows_rejected, regexp_replace(path, '.*/in/', '') "
         "from source_files order by 6, 2")
    assert built["spark"].execute(q).fetchall() == built["duck"].execute(q).fetchall()
    statuses = [r[1] for r in built["spark"].execute(q).fetchall()]
    assert "replaced" in statuses


def test_rerunning_an_ingest_reprocesses_nothing(built, spark):
    again = spark_engine.ingest(built["store"], [built["root"] / "in" / MONTHS[1] / name for name in FOLDERS], "auto", {},
                                load_config(built["root"] / "in" / MONTHS[1] / "meterbook.toml"))
    assert again and all(r.status == "unchanged" for r in again)
    # the first time, month two's files were loaded, but for those month one already had
    # (the same disclosure and instruments file: same sha256)
    month_one = {f["sha256"] for f in built["results"][0]}
    assert all(f["status"] == ("unchanged" if f["sha256"] in month_one else "loaded") for f in built["results"][1])
    assert sum(f["status"] == "loaded" for f in built["results"][1]) >= 8


def test_the_warehouse_is_parquet_partitioned_by_month(built):
    charges = built["root"] / "spark-warehouse" / "facts" / "charges"
    assert {p.name for p in charges.iterdir() if p.is_dir()} >= {f"month={m}" for m in MONTHS}
    # the months DuckDB's build reports (a job still running at a month's end reaches the next)
    months = {m for m, in built["duck"].execute("select distinct month from team_month").fetchall()}
    assert months >= set(MONTHS)
    team_month = built["root"] / "spark-warehouse" / "marts" / "team_month"
    assert {p.name for p in team_month.iterdir() if p.is_dir()} == {f"month={m}" for m in months}


@pytest.mark.parametrize("mart", sorted(CLUSTER_ROWS))
def test_the_cluster_marts_are_compared_filled(built, mart):
    """The on-premises cluster's jobs, cost pool lines and team months are in the marts that
    test_every_mart_equals_duckdbs compares, on both engines alike."""
    duck, = built["duck"].execute(CLUSTER_ROWS[mart]).fetchone()
    spark, = built["spark"].execute(CLUSTER_ROWS[mart]).fetchone()
    assert duck > 0 and spark == duck, mart


@pytest.mark.parametrize("month", MONTHS)
def test_the_chargeback_reads_the_same_from_either_warehouse(built, month):
    """The report step reads the Spark-built marts with DuckDB alone, no Spark, and writes the
    one-machine chargeback: its CSV (the figures of the PDF) cell for cell, text exactly, numbers
    within their quantum (a sum of doubles in another order may differ in the 10th decimal)."""
    from reports.chargeback import CSV_COLUMNS, build_context, csv_text
    config = load_config(built["root"] / "in" / MONTHS[0] / "meterbook.toml")

    def chargeback_csv(con) -> list[list[str]]:
        ctx = build_context(con, config, month)
        return list(csv.reader(io.StringIO(csv_text(ctx["teams"], CSV_COLUMNS + ctx["extra_columns"]))))
    spark_rows, duck_rows = chargeback_csv(built["spark"]), chargeback_csv(built["duck"])
    assert len(spark_rows) == len(duck_rows) > 3 and spark_rows[0] == duck_rows[0]
    for s_row, d_row in zip(spark_rows[1:], duck_rows[1:]):
        for column, a, b in zip(duck_rows[0], s_row, d_row):
            assert a == b or same(number(a), number(b), tolerance(column)), (month, column, a, b)


def number(cell: str) -> float | str:
    try:
        return float(cell)
    except ValueError:
        return cell


@pytest.mark.parametrize("table", FACTS)
def test_the_warehouse_holds_duckdbs_rows(built, spark, table):
    """Each fact table, rows of loaded files (file ids aside: each engine numbers its own)."""
    cols = [c for c, _ in duck_shapes()[table] if c != "file_id" and c not in ENGINE_COLUMNS]
    built["store"].register_inputs()
    duck = built["duck"].execute(f"select {', '.join(cols)} from {table} where file_id in "
                                 "(select file_id from source_files where status = 'loaded')").fetchall()
    on_spark = [tuple(v.asDict() if hasattr(v, "asDict") else v for v in r) for r in spark.table(table).select(*cols).collect()]
    assert bool(duck) == (table in FILLED), f"{table}: {len(duck)} rows on DuckDB"
    assert len(on_spark) == len(duck), table
    assert_same_rows(table, cols, duck, on_spark)
