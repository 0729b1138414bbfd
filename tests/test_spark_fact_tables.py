"""Every warehouse table the DuckDB ingest fills, the Spark ingest fills with the same rows: the
FOCUS 1.3/1.4 parts beside the charges (provider allocations, contract commitments applied),
the invoice details, a dcgmi job's stats, a Slurm month. Before, Spark's FOCUS reader wrote no
focus_allocations or charge_contracts: the models read them empty there."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.spark.storage import SparkStore, duck_shapes
from pipelines.warehouse import connect
from tests.conftest import DATA, ingest_json

FILES = [DATA / "focus" / "focus_1.3_provider_allocated_only.csv", DATA / "focus" / "focus_1.4_provider_allocated_only.csv",
         DATA / "focus" / "focus_1.4_invoice_detail.csv", DATA / "dcgmi_stats" / "job_1001_two_gpus.txt",
         DATA / "slurm" / "sacct_month.txt"]
TABLES = ("focus_allocations", "charge_contracts", "invoice_details", "invoices", "dcgm_job_stats", "slurm_jobs")
SAME = ("kind", "rows_read", "rows_loaded", "rows_rejected", "totals")


@pytest.fixture(scope="module")
def both(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark_facts")
    duck = ingest_json(root / "wh.duckdb", *FILES)["files"]
    res = CliRunner().invoke(main, ["ingest", *map(str, FILES), "--json", "--engine", "spark",
                                    "--spark-warehouse", str(root / "spark-warehouse")])
    assert res.exit_code == 0, res.output + repr(res.exception)
    store = SparkStore(spark, str(root / "spark-warehouse"))
    store.register_inputs()
    con = connect(root / "wh.duckdb")
    yield {"duck": duck, "spark": json.loads(res.stdout)["files"], "con": con, "session": spark}
    con.close()


def test_each_file_reads_and_loads_the_same(both):
    assert [{k: f.get(k) for k in SAME} for f in both["spark"]] == [{k: f.get(k) for k in SAME} for f in both["duck"]]


def plain(v):
    return float(v) if isinstance(v, Decimal) else dict(v) if hasattr(v, "items") else v


@pytest.mark.parametrize("table", TABLES)
def test_the_table_holds_duckdbs_rows(both, table):
    cols = [c for c, _ in duck_shapes()[table] if c != "file_id"]
    duck = sorted((tuple(plain(v) for v in r) for r in both["con"].execute(
        f"select {', '.join(cols)} from {table}").fetchall()), key=repr)
    spark = sorted((tuple(plain(v) for v in r) for r in both["session"].table(table).select(*cols).collect()), key=repr)
    assert duck, f"{table} is empty: the comparison would prove nothing"
    assert spark == duck
