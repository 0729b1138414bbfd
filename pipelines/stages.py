"""Run the SQL stages (intermediate, then marts) over the warehouse with the config applied.

Each model is one SQL file; its table has the file's name. The order below is the dependency
order; config and unit constants reach the SQL as DuckDB variables, never as pasted text.
"""
from __future__ import annotations

import duckdb
import pandas as pd
import pandera.pandas as pa

from pipelines.config import Config
from pipelines.units import G_PER_KG, MJ_PER_KWH, S_PER_H, W_PER_KW
from pipelines.warehouse import read_sql
from schemas.gpu_hours import GpuHours
from sources.reference_data import load_reference

STAGES: list[tuple[str, str]] = [
    ("20_intermediate", "gpu_hours"),
    ("20_intermediate", "int_gpu_workloads"),
    ("20_intermediate", "int_charges_teams"),
    ("20_intermediate", "int_zone_factors"),
    ("20_intermediate", "int_energy_lines"),
    ("30_marts", "team_month"),
    ("30_marts", "reconciliation"),
    ("30_marts", "focus_export"),
]


def apply_config(con: duckdb.DuckDBPyConnection, config: Config) -> None:
    variables = {
        "tag_keys": list(config.tag_keys), "unallocated": config.unallocated,
        "interval_s": config.interval_s, "gap_s": config.interval_s * config.gap_multiple,
        "default_zone": config.default_zone, "mj_per_kwh": MJ_PER_KWH, "w_per_kw": W_PER_KW, "g_per_kg": G_PER_KG,
        "s_per_h": S_PER_H,
    }
    for name, value in variables.items():
        con.execute(f"set variable {name} = ?", [value])
    ns = pd.DataFrame(list(config.namespace_teams.items()), columns=["namespace", "team"], dtype="string")
    hosts = pd.DataFrame(list(config.hosts.items()), columns=["host", "resource_id"], dtype="string")
    con.register("_ns", ns)
    con.register("_hosts", hosts)
    con.execute("create or replace temp table cfg_namespace_teams as select namespace::varchar as namespace, team::varchar as team from _ns")
    con.execute("create or replace temp table cfg_hosts as select host::varchar as host, resource_id::varchar as resource_id from _hosts")
    con.unregister("_ns")
    con.unregister("_hosts")


# Rollups small enough for pandas, validated by their pandera model after every run.
VALIDATED: dict[str, type[pa.DataFrameModel]] = {"gpu_hours": GpuHours}


def run_stages(con: duckdb.DuckDBPyConnection, config: Config) -> None:
    load_reference(con)
    apply_config(con, config)
    con.execute("begin transaction")
    try:
        for folder, name in STAGES:
            con.execute(f"create or replace table {name} as {read_sql(folder, name + '.sql')}")
        findings = [f for table, model in VALIDATED.items() for f in contract_failures(con, table, model)]
        con.execute("create or replace table contract_findings (table_name varchar, column_name varchar, "
                    "check_name varchar, rows bigint, example varchar)")
        if findings:
            con.executemany("insert into contract_findings values (?, ?, ?, ?, ?)", findings)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise


def contract_failures(con: duckdb.DuckDBPyConnection, table: str, model: type[pa.DataFrameModel]) -> list[tuple]:
    """Lazy pandera validation of a rollup: every failing check, counted, with one example."""
    df = con.sql(f"select * from {table}").to_arrow_table().to_pandas()
    try:
        model.validate(df, lazy=True)
        return []
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        out = []
        for (column, check), grp in cases.groupby(["column", "check"], dropna=False):
            out.append((table, str(column), str(check), len(grp), str(grp["failure_case"].iloc[0])[:200]))
        return out
