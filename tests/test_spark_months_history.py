"""The Spark months benchmark's history is what a build of every month writes: a mart Spark
wrote for the built month is replaced by the DuckDB engine's rows of every month, in the
columns, order and types Spark wrote (a Spark build reading it back, and DuckDB publishing it,
see the same table), partitioned by month as Spark partitions it."""
from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from benchmarks.spark_months import rewrite


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("create table team_month as select * from (values ('2026-09', 'a', 1.5::double, 3), "
                "('2026-10', 'a', 2.25::double, 4)) t (month, team, billed_cost, n)")
    yield con
    con.close()


def spark_wrote(con, folder) -> None:
    """A mart as Spark writes one: its month a folder, decimals at Spark's precision, columns in
    the model's order (not the DuckDB table's)."""
    (folder / "month=2026-10").mkdir(parents=True)
    con.execute(f"copy (select 4::bigint as n, 2.25::decimal(38, 12) as billed_cost, 'a' as team) "
                f"to '{folder}/month=2026-10/part-00000-spark.snappy.parquet' (format parquet)")


def test_a_mart_is_rewritten_in_sparks_columns_for_every_month(con, tmp_path):
    folder = tmp_path / "marts" / "team_month"
    spark_wrote(con, folder)
    rewrite(con, folder, partitioned=True)
    assert sorted(p.name for p in folder.iterdir()) == ["month=2026-09", "month=2026-10"]
    got = con.execute(f"select * from read_parquet('{folder}/*/*.parquet', hive_partitioning = true) order by month")
    assert [c[0] for c in got.description] == ["n", "billed_cost", "team", "month"]
    assert got.fetchall() == [(3, Decimal("1.5"), "a", "2026-09"), (4, Decimal("2.25"), "a", "2026-10")]
    types = con.execute(f"describe select * from read_parquet('{folder}/*/*.parquet', hive_partitioning = false)").fetchall()
    assert [t for _, t, *_ in types] == ["BIGINT", "DECIMAL(38,12)", "VARCHAR"]


def test_rows_where_spark_wrote_none_are_refused(con, tmp_path):
    """A mart Spark wrote no file of has no types to write DuckDB's rows in: the history would not
    be a build of its months."""
    folder = tmp_path / "marts" / "team_month"
    folder.mkdir(parents=True)
    with pytest.raises(AssertionError):
        rewrite(con, folder, partitioned=True)
