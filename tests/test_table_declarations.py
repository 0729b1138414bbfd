"""The warehouse's tables are created in one place, pipelines.warehouse.create_tables, which the
DuckDB warehouse, the Spark engine's scratch warehouse and its table shapes all call: a second
loop over the table files could create a different set of tables for one engine."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_only_create_tables_walks_the_table_files():
    walkers = sorted(str(p.relative_to(ROOT)) for pkg in ("core", "schemas", "sources", "pipelines", "reports")
                     for p in (ROOT / pkg).rglob("*.py") if 'sql_files("00_warehouse")' in p.read_text(encoding="utf-8"))
    assert walkers == ["pipelines/warehouse.py"]


def test_both_engines_know_the_same_tables():
    import duckdb

    from pipelines.spark.storage import FACTS, LINEAGE, duck_shapes
    from pipelines.warehouse import create_tables
    con = duckdb.connect()
    create_tables(con)
    tables = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
    assert set(FACTS) | set(LINEAGE) <= tables
    assert all(duck_shapes()[t] for t in (*FACTS, *LINEAGE))
