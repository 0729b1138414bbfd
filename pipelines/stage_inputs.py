"""What the SQL stages read besides the warehouse's tables: the config as DuckDB variables and
cfg_ temp tables, and one telemetry file's energy by the int_gpu_hours model.

Apart from pipelines.stages (which imports pandas, pandera and scipy for the build's contracts
and fits) because ingest needs these too and starts in a fresh process each time: importing the
build step cost ingest about a second before it read a byte.
"""
from __future__ import annotations

import duckdb

from core.csv_amounts import minor_units
from core.sql import model_over
from core.units import (
    G_PER_KG,
    H_PER_YEAR,
    MJ_PER_KWH,
    MONTHS_PER_YEAR,
    PERCENT,
    S_PER_H,
    TOKENS_PER_MILLION,
    UNITS_PER_THOUSAND,
    W_PER_KW,
)
from core.vocabulary import METERS
from pipelines.config import UNDECLARED_SOURCE, Config
from sources.bounded import limit


def config_variables(config: Config) -> dict[str, object]:
    """The scalar settings the SQL reads with getvariable() (DuckDB variables; literals on Spark)."""
    return {
        "tag_keys": list(config.tag_keys), "unallocated": config.unallocated,
        "interval_s": config.interval_s, "gap_s": config.interval_s * config.gap_multiple,
        "default_zone": config.default_zone, "mj_per_kwh": MJ_PER_KWH, "w_per_kw": W_PER_KW, "g_per_kg": G_PER_KG,
        "s_per_h": S_PER_H, "tokens_per_million": TOKENS_PER_MILLION, "units_per_thousand": UNITS_PER_THOUSAND,
        "months_per_year": MONTHS_PER_YEAR, "h_per_year": H_PER_YEAR,
        "hourly_factor_type": config.hourly_factor_type, "percent": PERCENT,
        **config.sharing,
        # '' = the month's only billing currency (a varchar variable cannot be null on Spark)
        "reporting_currency": config.currency.reporting or "", "rate_rule": config.currency.rate_rule,
        "fx_rounding": config.currency.rounding, "fx_lookback_days": int(limit("fx_rate_lookback_days")),
        "budget_rate_source": config.currency.budget_source,
    }


def config_tables(config: Config) -> dict[str, tuple[list[str], list[tuple], list[str]]]:
    """The mappings the SQL joins, as {name: (columns, rows, DuckDB types)}: cfg_* temp tables
    on DuckDB, temp views on Spark."""
    return {
        "cfg_namespace_teams": (["namespace", "team"], list(config.namespace_teams.items()), ["varchar"] * 2),
        "cfg_hosts": (["host", "resource_id"], list(config.hosts.items()), ["varchar"] * 2),
        "cfg_account_teams": (["account", "team"], list(config.account_teams.items()), ["varchar"] * 2),
        "cfg_team_rules": (["ord", "field", "tag_key", "pattern", "team"],
                           [(i, r.field, r.tag_key, r.pattern, r.team) for i, r in enumerate(config.team_rules)],
                           ["integer", "varchar", "varchar", "varchar", "varchar"]),
        "cfg_alloc_rules": (["category", "rule"], list(config.allocation.items()), ["varchar"] * 2),
        "cfg_alloc_weights": (["team", "weight"], list(config.weights.items()), ["varchar", "double"]),
        "cfg_supplier_factors": (["ord", "zone", "g_per_kwh", "source", "year"], supplier_rows(config),
                                 ["integer", "varchar", "double", "varchar", "integer"]),
        "cfg_grid_zones": (["zone", "grid_zone"], list(config.grid_zones.items()), ["varchar"] * 2),
        "cfg_findings": (["param", "value"], list(config.findings.items()), ["varchar", "double"]),
        "cfg_whatif": (["param", "value"], list(config.whatif.items()), ["varchar", "double"]),
        "cfg_whatif_regions": (["zone"], [(z,) for z in config.whatif_regions], ["varchar"]),
        "cfg_deferrable": (["kind", "name"], [("namespace", n) for n in config.deferrable_namespaces]
                           + [("job", j) for j in config.deferrable_jobs], ["varchar"] * 2),
        "cfg_ownership": (["level", "name", "ownership"], [(lv, n, o) for (lv, n), o in config.ownership.items()],
                          ["varchar"] * 3),
        "cfg_clusters": (["cluster", "gpus", "gpu_model", "capex_usd_per_gpu", "lifetime_years", "electricity_usd_per_kwh",
                          "ops_usd_per_gpu_month", "pue"],
                         [(c.name, c.gpus, c.gpu_model, c.capex_usd_per_gpu, c.lifetime_years, c.electricity_usd_per_kwh,
                           c.ops_usd_per_gpu_month, c.pue) for c in config.clusters],
                         ["varchar", "double", "varchar"] + ["double"] * 5),
        "cfg_cluster_members": (["cluster", "kind", "name"],
                                [(c.name, "partition", n) for c in config.clusters for n in c.partitions]
                                + [(c.name, "host", h) for c in config.clusters for h in c.hosts], ["varchar"] * 3),
        "cfg_budget_rates": (["from_currency", "rate"], list(config.currency.budget_rates.items()),
                             ["varchar", "decimal(38, 12)"]),
        "cfg_minor_units": (["currency", "places"], sorted(minor_units().items()), ["varchar", "integer"]),
        "cfg_meters": (["meter", "unit", "quantum_places"], [(m, u, d) for m, (u, d) in METERS.items()],
                       ["varchar", "varchar", "integer"]),
    }


def apply_config(con: duckdb.DuckDBPyConnection, config: Config) -> None:
    for name, value in config_variables(config).items():
        con.execute(f"set variable {name} = ?", [value])
    for name, (columns, rows, types) in config_tables(config).items():
        temp_table(con, name, columns, rows, types)


def supplier_rows(config: Config) -> list[tuple]:
    """Declared supplier factors in file order, then the legacy per-zone factors, which declare
    no source or year (kept working; the audit says so)."""
    rows = [(f.zone, f.g_per_kwh, f.source, f.year) for f in config.supplier_factors]
    rows += [(zone, g, UNDECLARED_SOURCE, None) for zone, g in config.market_intensity.items()]
    return [(i, *r) for i, r in enumerate(rows)]


def temp_table(con: duckdb.DuckDBPyConnection, name: str, columns: list[str], rows: list[tuple], types: list[str]) -> None:
    """A typed temp table from Python rows (config reaches SQL as data, never as pasted text)."""
    cols = ", ".join(f"{c} {t}" for c, t in zip(columns, types))
    con.execute(f"create or replace temp table {name} ({cols})")
    # a statement per thousand rows: executemany costs one per row (the currencies' 170 rows
    # took 70 ms), and a statement's parameters grow its cost per row past a few thousand
    row = f"({', '.join('?' * len(columns))})"
    for i in range(0, len(rows), 1000):
        part = rows[i:i + 1000]
        con.execute(f"insert into {name} values {', '.join([row] * len(part))}", [v for r in part for v in r])


def file_energy_kwh(con: duckdb.DuckDBPyConnection, file_id: int) -> float:
    """The IT energy of one telemetry file's GPU-hours, by the int_gpu_hours model itself (resets,
    gaps and the board cap as the reports see them). Needs the reference tables and the
    config's variables (apply_config) on the connection."""
    return files_energy_kwh(con, [file_id])[file_id]


def files_energy_kwh(con: duckdb.DuckDBPyConnection, file_ids: list[int]) -> dict[int, float]:
    """file_energy_kwh of each of `file_ids`, by one run of the model: each file's GPUs are
    taken apart (their UUIDs prefixed with the file's id), and the model reads a GPU's parts
    alone (it groups and orders by GPU), so each file's total is its own, never merged with
    another file's hours of the same GPU."""
    sql = model_over("20_intermediate", "int_gpu_hours.sql", {
        "gpu_hour_parts": "select * replace (file_id::varchar || ':' || gpu_uuid as gpu_uuid) from main.gpu_hour_parts "
                          "where list_contains($file_ids, file_id)"})
    # dsum: the same total whatever order the hours come in (alone or in a batch)
    rows = con.execute(f"select split_part(gpu_uuid, ':', 1)::bigint, coalesce(dsum(energy_kwh), 0) from ({sql}) group by 1",
                       {"file_ids": list(file_ids)}).fetchall()
    return {**{i: 0.0 for i in file_ids}, **{int(i): float(kwh) for i, kwh in rows}}
