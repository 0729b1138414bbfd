"""A FOCUS 1.3 file holding an origin charge and its allocated rows, ingested by Spark as by
DuckDB: the origin set aside (focus_origin_charges), its cost counted once through the
allocated rows, the same counts and note. Before, Spark loaded the origin beside its split."""
from __future__ import annotations

import json
from decimal import Decimal

from click.testing import CliRunner

from pipelines.cli import main
from pipelines.spark.storage import SparkStore
from tests.conftest import DATA, ingest_json

FILE = DATA / "focus" / "focus_1.3_origin_and_allocated.csv"     # 796.48 USD billed, origin row 1 (786.48)
SAME = ("rows_read", "rows_loaded", "rows_rejected", "format_version", "notes")


def test_spark_sets_the_origin_charge_aside_as_duckdb_does(spark, tmp_path):
    duck = ingest_json(tmp_path / "wh.duckdb", FILE)["files"][0]
    res = CliRunner().invoke(main, ["ingest", str(FILE), "--json", "--engine", "spark",
                                    "--spark-warehouse", str(tmp_path / "spark-warehouse")])
    assert res.exit_code == 0, res.output + repr(res.exception)
    on_spark = json.loads(res.stdout)["files"][0]
    assert {k: on_spark.get(k) for k in SAME} == {k: duck.get(k) for k in SAME}
    assert any("origin charge" in n for n in on_spark["notes"])
    store = SparkStore(spark, str(tmp_path / "spark-warehouse"))
    billed = store.fact("charges").selectExpr("sum(billed_cost)").first()[0]
    origins = store.fact("focus_origin_charges").selectExpr("count(*)", "sum(billed_cost)", "sum(allocated_rows)").first()
    assert billed == Decimal("796.48")
    assert tuple(origins) == (1, Decimal("786.48"), 3)
