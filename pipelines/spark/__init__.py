"""The Spark engine: the same models on Spark SQL (dialect), readers at scale (readers, ingest),
a Parquet warehouse (storage), the build and its publication for the reports (build, engine).
Nothing here is imported on the DuckDB path but `is_spark_built`."""
from __future__ import annotations


def is_spark_built(con) -> bool:
    """A DuckDB warehouse whose marts a Spark build published (its facts live in Spark)."""
    return bool(con.execute("select count(*) from duckdb_tables() where table_name = 'spark_build'").fetchall()[0][0])
