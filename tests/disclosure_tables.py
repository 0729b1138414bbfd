"""An empty job_disclosure_month table in a bare DuckDB, for tests of the disclosure forms that
write their own rows (the mart's columns the forms read, every summed one as a double)."""
from __future__ import annotations

import duckdb

from reports.disclosure import SUMMED


def job_disclosure_table() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    cols = ", ".join(f"{c} double" for c in SUMMED)
    con.execute(f"""create table job_disclosure_month (month varchar, job_id varchar, workload varchar, params double,
        gpu_models varchar, gpus integer, start_utc timestamp, end_utc timestamp, energy_tier varchar,
        assumption_ids varchar[], ownership varchar, electricity_scope varchar, embodied_scope varchar, {cols},
        pue double, pue_low double, pue_high double, pue_ids varchar[], energy_provider varchar)""")
    return con
