"""The build step: run the SQL stages (intermediate, then marts) over the warehouse with the
config applied, then check every mart against its pandera model.

Reports and exports only read what this writes (marts, lineage, reference tables): a figure is
computed once, here, and every output agrees. Each model is one SQL file; its table has the
file's name. The order below is the dependency order; config and unit constants reach the SQL
as DuckDB variables, never as pasted text.
"""
from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from pathlib import Path

import duckdb
import pandas as pd
import pandera.pandas as pa

from core.sql import ident, one_row, read_sql, sql_files
from pipelines import month_scope
from pipelines.audit_marts import team_audit_table, team_sensitivity_table
from pipelines.audit_reconstructions import audit_reconstructions_table
from pipelines.config import Config, load_config
from pipelines.models import PYTHON, Model, ModelGraphError, build_order, sql_models, unprovided_reads
from pipelines.name_folds import name_folds_table
from pipelines.progress import BuildProgress, ticking
from pipelines.scaling import scaling_fits_table
from pipelines.scope_marts import scope_table
from pipelines.stage_inputs import apply_config, config_variables
from pipelines.warehouse import database_path, out_of_memory
from schemas.allocation_day import AllocationDay
from schemas.allocation_lines import AllocationLines
from schemas.audit_disclosures import AuditDisclosures
from schemas.audit_reconstructions import AuditReconstructions
from schemas.carbon_month import CarbonMonth
from schemas.cluster_job_month import ClusterJobMonth
from schemas.contract import frame_rules, sql_checks
from schemas.energy_tiers_month import EnergyTiersMonth
from schemas.findings_month import FindingsMonth
from schemas.findings_ranked import FindingsRanked
from schemas.host_workload_hours import HostWorkloadHours
from schemas.host_workload_month import HostWorkloadMonth
from schemas.int_gpu_hours import GpuHours
from schemas.job_disclosure_month import JobDisclosureMonth
from schemas.job_month import JobMonth, TeamWorkMonth
from schemas.market_basis_month import MarketBasisMonth
from schemas.month_files import MonthFiles
from schemas.provider_carbon_reconciliation import ProviderCarbonReconciliation
from schemas.reconciliation import Reconciliation
from schemas.reporting_marts import AllocationDayReporting, JobMonthReporting, WhatifMonthReporting
from schemas.run_month import RunMonth
from schemas.scope_month import ScopeMonth
from schemas.team_audit_month import TeamAuditMonth
from schemas.team_coverage_month import TeamCoverageMonth
from schemas.team_currency_month import TeamCurrencyMonth
from schemas.team_day import TeamDay
from schemas.team_energy_lines import TeamEnergyLines
from schemas.team_gpu_model_month import TeamGpuModelMonth
from schemas.team_month import TeamMonth
from schemas.team_month_reporting import TeamMonthReporting
from schemas.team_namespace_day import TeamNamespaceDay
from schemas.team_resource_month import TeamResourceMonth
from schemas.team_sensitivity_month import TeamSensitivityMonth
from schemas.telemetry_month import TelemetryMonth
from schemas.whatif_month import WhatifMonth
from schemas.workload_month import WorkloadMonth
from sources.reference_data import load_reference

# Models computed in Python, with the tables each reads (its queries are its own; the graph needs
# them declared to place the model).
PYTHON_MODELS = {"int_scaling_fits": (scaling_fits_table, frozenset({"run_month", "int_charges_teams"})),
                 "int_name_folds": (name_folds_table, frozenset({"int_tag_values"}))}
# Marts computed in Python (the footprint audit's team figures, through the reconstruct engine):
# built here, never while a report renders.
PYTHON_MARTS = {
    "team_audit_month": (team_audit_table, frozenset({"team_month", "team_energy_lines", "team_gpu_model_month"})),
    "team_sensitivity_month": (team_sensitivity_table, frozenset({"team_month", "team_energy_lines", "team_gpu_model_month"})),
    "audit_reconstructions": (audit_reconstructions_table, frozenset({"disclosures", "host_workload_month", "run_month"})),
    "scope_month": (scope_table, frozenset({"team_energy_lines", "team_gpu_model_month", "int_resource_ownership"})),
}
PYTHON_MODELS |= PYTHON_MARTS


def stages() -> list[Model]:
    """Every model in build order (pipelines.models derives it from the models' own reads)."""
    return build_order([*sql_models(), *(Model(n, PYTHON, reads) for n, (_, reads) in PYTHON_MODELS.items())])


# What the build step writes for readers: the marts, and the contract findings on them.
MARTS: tuple[str, ...] = (tuple(f.removesuffix(".sql") for f in sql_files("30_marts")) + tuple(PYTHON_MARTS)
                          + ("contract_findings",))
# Marts with no month (the audit's published disclosures and their reconstructions): the Spark
# engine builds them on the DuckDB side when it publishes, from the tables it publishes.
UNDATED_MARTS = ("audit_disclosures", "audit_reconstructions")


# Tables that grow with the bill (line-level marts: tens of millions of rows a month for a large
# CUR) or the fleet (int_gpu_hours: GPUs x hours): their models run as SQL over the table, never as a
# pandas frame (sql_contract_failures).
IN_SQL = frozenset({"allocation_lines", "allocation_day", "allocation_day_reporting", "int_gpu_hours"})

# Rollups and marts small enough for pandas, validated by their pandera model after every run.
# focus_export is not here: it is checked against the FOCUS rules (pipelines.focus_rules).
VALIDATED: dict[str, type[pa.DataFrameModel]] = {
    "int_gpu_hours": GpuHours,
    "allocation_lines": AllocationLines,
    "allocation_day": AllocationDay,
    "team_month": TeamMonth,
    "team_currency_month": TeamCurrencyMonth,
    "team_month_reporting": TeamMonthReporting,
    "team_energy_lines": TeamEnergyLines,
    "reconciliation": Reconciliation,
    "findings_month": FindingsMonth,
    "carbon_month": CarbonMonth,
    "market_basis_month": MarketBasisMonth,
    "whatif_month": WhatifMonth,
    "workload_month": WorkloadMonth,
    "cluster_job_month": ClusterJobMonth,
    "energy_tiers_month": EnergyTiersMonth,
    "telemetry_month": TelemetryMonth,
    "team_gpu_model_month": TeamGpuModelMonth,
    "host_workload_month": HostWorkloadMonth,
    "host_workload_hours": HostWorkloadHours,
    "run_month": RunMonth,
    "month_files": MonthFiles,
    "findings_ranked": FindingsRanked,
    "team_coverage_month": TeamCoverageMonth,
    "team_resource_month": TeamResourceMonth,
    "team_namespace_day": TeamNamespaceDay,
    "team_day": TeamDay,
    "job_month": JobMonth,
    "job_month_reporting": JobMonthReporting,
    "allocation_day_reporting": AllocationDayReporting,
    "whatif_month_reporting": WhatifMonthReporting,
    "team_work_month": TeamWorkMonth,
    "job_disclosure_month": JobDisclosureMonth,
    "provider_carbon_reconciliation": ProviderCarbonReconciliation,
    # the footprint audit's Python-built marts
    "team_audit_month": TeamAuditMonth,
    "scope_month": ScopeMonth,
    "team_sensitivity_month": TeamSensitivityMonth,
    "audit_disclosures": AuditDisclosures,
    "audit_reconstructions": AuditReconstructions,
}
# The marts no pandera model checks, each with where it is checked instead; every other mart is in
# VALIDATED (tests/test_mart_registry.py fails on a mart in neither).
NOT_VALIDATED = {
    "contract_findings": "the contracts' own findings",
    "focus_export": "the FOCUS rules (pipelines.focus_rules) in the FOCUS tests",
    "focus_allocated": "the FOCUS rules, as focus_export's lines split by team (the export tests)",
    "fx_month": "none yet: the rates a month used, read by the chargeback's currency section",
}


# The config the marts were last built with (its sha256, path and text; a null sha256: the
# defaults). A report or export run without --config rebuilds with this one, so every output of
# a warehouse states the figures its last build stated, never the defaults by surprise.
CONFIG_TABLE = "build_config"


def record_config(con: duckdb.DuckDBPyConnection, config: Config, text: str | None = None) -> None:
    """Write CONFIG_TABLE for `config`; `text` is its file's content (read from config.path if not given)."""
    if text is None and config.path is not None:
        text = Path(config.path).read_bytes().decode("utf-8")
    con.execute(f"create or replace table {CONFIG_TABLE} (config_sha256 varchar, config_path varchar, config_text varchar)")
    con.execute(f"insert into {CONFIG_TABLE} values (?, ?, ?)", [config.sha256, config.path, text])


def recorded_config(con: duckdb.DuckDBPyConnection) -> tuple[Config, str] | None:
    """The config the warehouse was last built with, and its text; None when it was never built
    or was built with the defaults. Read back through load_config (the same checks; a file's bytes
    give the same sha256), then named by the path it was built from."""
    if not one_row(con, "select count(*) from duckdb_tables() where table_name = ?", [CONFIG_TABLE])[0]:
        return None
    row = con.execute(f"select config_sha256, config_path, config_text from {CONFIG_TABLE}").fetchone()
    if row is None or row[0] is None or row[2] is None:
        return None
    sha, path, text = row
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "meterbook.toml"
        copy.write_bytes(text.encode("utf-8"))
        config = load_config(copy)
    return dataclasses.replace(config, path=path, sha256=sha), text


def run_stages(con: duckdb.DuckDBPyConnection, config: Config, progress: BuildProgress | None = None,
               config_text: str | None = None) -> None:
    """The models of the months whose inputs changed (pipelines.month_scope), then the contracts
    on what was rebuilt, in one transaction; every TICK_S seconds a line on stderr says which
    model runs. `progress` (optional) keeps each model's seconds and the months rebuilt.
    The config is recorded with the marts (record_config; `config_text` its file's content)."""
    load_reference(con)
    apply_config(con, config)
    order = stages()
    progress = progress or BuildProgress()
    progress.total, progress.percent = len(order), con.query_progress
    db = database_path(con) or "warehouse"
    tables = [r[0] for r in con.execute("select table_name from duckdb_tables() union all select view_name from duckdb_views()").fetchall()]
    if missing := unprovided_reads(order, tables):
        model, table = missing[0]
        raise ModelGraphError(f"model {model} reads {table}, which no model builds and the warehouse lacks")
    con.execute("begin transaction")
    try:
        month_scope.map_rows(con)
        shared = month_scope.shared_fingerprint(con, config_variables(config), [f for f, _ in PYTHON_MODELS.values()])
        scope = month_scope.plan(con, shared, [m.name for m in order])
        progress.scope = scope
        with ticking("build", progress.status):
            findings: list[tuple] = []
            if scope.full or scope.rebuilt or scope.removed:
                findings = _build_months(con, order, scope, progress, db)
                progress.patched = month_scope.refresh_previous_month(con, scope)
            if scope.undated:
                for step in (s for s in order if s.name in month_scope.AFTER):
                    with progress.model(step.name):
                        build_model(con, step)
                findings += [("-", *f) for t in month_scope.AFTER if t in VALIDATED for f in contract_failures(con, t, VALIDATED[t])]
        record_findings(con, scope, findings)
        month_scope.record(con, scope)
        record_config(con, config, config_text)
        con.execute("commit")
    except duckdb.OutOfMemoryException:
        # past a model (each names itself): the month scope's row maps, fingerprints and merges
        con.execute("rollback")
        raise out_of_memory(db, "building month_scope") from None
    except BaseException:
        con.execute("rollback")
        raise
    finally:
        # the stand-ins are temporary: a connection short of memory drops them when it closes
        with contextlib.suppress(duckdb.OutOfMemoryException):
            month_scope.forget_scope(con, [m.name for m in order])


def _build_months(con: duckdb.DuckDBPyConnection, order: list[Model], scope: month_scope.Scope, progress: BuildProgress,
                  db: str) -> list[tuple]:
    """Every model but the AFTER ones over the rebuilt months' rows (temp tables), checked, then
    written over those months in the warehouse; returns the contract findings, by month."""
    month_scope.restrict_inputs(con, scope.rebuilt)
    steps = [s for s in order if s.name not in month_scope.AFTER]
    for step in steps:
        with progress.model(step.name):
            try:
                build_model(con, step, temp=True)
            except duckdb.OutOfMemoryException:
                raise out_of_memory(db, f"building {step.name}") from None
            if step.name not in month_scope.READ_ACROSS:
                month_scope.prune(con, step.name, scope.rebuilt)
    for step in (s for s in steps if s.name in month_scope.READ_ACROSS):
        month_scope.prune(con, step.name, scope.rebuilt)
    findings = month_findings(con, scope)
    for step in steps:
        month_scope.merge(con, step.name, scope)
    month_scope.forget_scope(con, [s.name for s in steps])
    return findings


def month_findings(con: duckdb.DuckDBPyConnection, scope: month_scope.Scope) -> list[tuple]:
    """Contract findings on the rebuilt months' rows, as (month, table, column, check, rows,
    example); checked once over them all, and month by month only where something fails."""
    dated = {t: m for t, m in VALIDATED.items() if t not in month_scope.UNDATED}
    undated = [("-", *f) for t, m in VALIDATED.items() if t in month_scope.UNDATED - month_scope.AFTER
               for f in contract_failures(con, t, m)]
    found = [f for t, m in dated.items() for f in contract_failures(con, t, m)]
    if not found or len(scope.rebuilt) == 1:
        return undated + [(scope.rebuilt[0], *f) for f in found]
    out = []
    for month in scope.rebuilt:
        for table in sorted({f[0] for f in found}):
            con.execute(f"create or replace temp table _check as select * from temp.main.{table} "
                        f"where {month_scope.month_of(table)} = ?", [month])
            out += [(month, table, *f[1:]) for f in contract_failures(con, "_check", dated[table])]
    con.execute("drop table if exists temp.main._check")
    return undated + out


def record_findings(con: duckdb.DuckDBPyConnection, scope: month_scope.Scope, findings: list[tuple]) -> None:
    """contract_findings_month keeps each month's findings ('-': the undated marts'); the
    contract_findings readers see are their sum over the months."""
    by_month = month_scope.qualified(con, "contract_findings_month")
    if scope.full or not one_row(con, "select count(*) from duckdb_tables() where table_name = 'contract_findings_month'")[0]:
        con.execute(f"create or replace table {by_month} (month varchar, table_name varchar, column_name varchar, "
                    "check_name varchar, rows bigint, example varchar)")
    again = scope.rebuilt + scope.removed + (["-"] if scope.undated else [])
    con.execute(f"delete from {by_month} where list_contains(?::varchar[], month)", [again])
    if findings:
        con.executemany(f"insert into {by_month} values (?, ?, ?, ?, ?, ?)", findings)
    con.execute("create or replace table contract_findings as select table_name, column_name, check_name, "
                f"sum(rows)::bigint as rows, min(example) as example from {by_month} group by all order by all")


def build_model(con: duckdb.DuckDBPyConnection, model: Model, temp: bool = False) -> None:
    kind = "temp table" if temp else "table"
    if model.folder == PYTHON:
        con.register("_py_stage", PYTHON_MODELS[model.name][0](con))
        con.execute(f"create or replace {kind} {model.name} as select * from _py_stage")
        con.unregister("_py_stage")
    else:
        con.execute(f"create or replace {kind} {model.name} as {read_sql(model.folder, model.name + '.sql')}")


def contract_failures(con: duckdb.DuckDBPyConnection, table: str, model: type[pa.DataFrameModel]) -> list[tuple]:
    """Lazy pandera validation of a table: every failing check, as (table, column, check, rows,
    example). A check over several columns (the grain's uniqueness, a dataframe check declaring
    `columns=`) is one finding naming them all; the example is a failing row's values and grain key."""
    return (sql_contract_failures if table in IN_SQL else pandas_contract_failures)(con, table, model)


def pandas_contract_failures(con: duckdb.DuckDBPyConnection, table: str, model: type[pa.DataFrameModel]) -> list[tuple]:
    """contract_failures by pandera over the whole table as a pandas frame."""
    # in one order whatever wrote the table (one engine or the other, rows in any order), so the
    # example a finding quotes is the same first failing row
    df = con.sql(f"select {_as_checked(con, table)} from {table} order by all").to_arrow_table().to_pandas()
    schema = model.to_schema()
    try:
        schema.validate(df, lazy=True)
        return []
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
    key = list(schema.unique or [])
    declared = {c.name: list((c.statistics or {}).get("columns") or []) for c in schema.checks}

    def located(case: pd.Series) -> str:
        # pandera lists a frame-level failure once per column of the failing row: name the
        # columns the check is about instead
        if case["schema_context"] != "DataFrameSchema":
            return str(case["column"])
        if case["check"] == "multiple_fields_uniqueness":
            return ", ".join(key)
        if case["check"] == "column_in_dataframe":
            return str(case["failure_case"])
        return ", ".join(declared.get(case["check"]) or [schema.name or table])

    cases = cases.assign(located=cases.apply(located, axis=1))
    out = []
    for (column, check), grp in cases.groupby(["located", "check"], dropna=False, sort=True):
        on_rows = grp[grp["index"].notna()]
        first = on_rows.iloc[0] if len(on_rows) else grp.iloc[0]
        out.append((table, column, str(check), int(on_rows["index"].nunique()) or len(grp),
                    _example(df, first, key, column)[:200]))
    return out


def _as_checked(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """The table's columns as validation reads them. DECIMAL arrives in pandas as Python Decimal
    objects, ~30x slower to build and coerce than doubles (0.4 s per 200k rows and column). Every
    check on money compares within a tolerance far above a double's rounding, so validation reads
    doubles, in SQL too (one reading of each rule); the table keeps its decimals."""
    rel = con.sql(f"select * from {table}")
    return ", ".join(f"{ident(c)}::double as {ident(c)}" if str(t).startswith("DECIMAL") else ident(c)
                     for c, t in zip(rel.columns, rel.types))


def sql_contract_failures(con: duckdb.DuckDBPyConnection, table: str, model: type[pa.DataFrameModel]) -> list[tuple]:
    """contract_failures for a table too large for pandas, in DuckDB over the table: the model's
    column checks compiled to SQL (schemas.contract.sql_checks), its frame rules' own SQL, and the
    grain's uniqueness; the same findings, named and located as pandera names them. One pass
    flags every row; the example of a failing check is its first failing row in the same order
    as the pandas path's. Dtypes are the SQL model's own and not re-checked."""
    schema = model.to_schema()
    columns = [r[0] for r in con.execute(f"describe {table}").fetchall()]
    key = list(schema.unique or [])
    out: list[tuple] = [(table, name, "column_in_dataframe", 1, name) for name in schema.columns if name not in columns]
    # (located, check, context, failing predicate)
    probes = [(c.column, c.label, "Column", c.failing_sql) for c in sql_checks(model, set(columns))]
    probes += [(", ".join(r.columns) or (schema.name or table), r.name, "DataFrameSchema", f"not coalesce(({r.passes_sql}), true)")
               for r in frame_rules(model) if set(r.columns) <= set(columns)]
    if probes:
        flagged = (f"select *, {', '.join(f'({p[3]}) as _f{i}' for i, p in enumerate(probes))} "
                   f"from (select {_as_checked(con, table)} from {table})")
        counts = one_row(con, f"select {', '.join(f'count(*) filter (where _f{i})' for i in range(len(probes)))} from ({flagged})")
        for i, ((located, check, context, _), n) in enumerate(zip(probes, counts)):
            if n:
                first = _first(con, f"select {', '.join(ident(c) for c in columns)} from ({flagged}) where _f{i}")
                value = _as_coerced(schema, located, first) if context == "Column" else None
                out.append(_finding(table, located, check, n, first, context, value, key))
    if key and set(key) <= set(columns):
        out += _duplicates(con, table, key)
    return sorted(out, key=lambda f: (f[1], f[2]))


def _as_coerced(schema: pa.DataFrameSchema, column: str, first: pd.DataFrame) -> object:
    """A failing value as pandera quotes it: coerced to the model's dtype (a float column's 0 is 0.0)."""
    try:
        return schema.columns[column].dtype.coerce(first[column]).iloc[0]
    except (pa.errors.SchemaError, ValueError, TypeError):
        return first[column].iloc[0]


def _duplicates(con: duckdb.DuckDBPyConnection, table: str, key: list[str]) -> list[tuple]:
    """The grain's uniqueness in SQL: rows sharing a key, counted (pandera reports every one)
    with the first such row as example. Hashed first, so the group-by holds 8 bytes a row,
    then confirmed on the keys themselves (a hash collision is no duplicate)."""
    keys = ", ".join(ident(k) for k in key)
    dup = (f"select * from {table} where hash({keys}) in (select hash({keys}) from {table} group by 1 having count(*) > 1) "
           f"qualify count(*) over (partition by {keys}) > 1")
    n = one_row(con, f"select count(*) from ({dup})")[0]
    if not n:
        return []
    first = _first(con, f"select {_as_checked(con, table)} from ({dup})")
    return [_finding(table, ", ".join(key), "multiple_fields_uniqueness", n, first, "DataFrameSchema", None, key)]


def _first(con: duckdb.DuckDBPyConnection, rows_sql: str) -> pd.DataFrame:
    """The first of the rows in the pandas path's order (order by all), as pandas reads it."""
    return con.sql(f"{rows_sql} order by all limit 1").to_arrow_table().to_pandas()


def _finding(table: str, located: str, check: str, n: int, first: pd.DataFrame, context: str, value: object,
             key: list[str]) -> tuple:
    """A finding of the SQL path, worded by _example as the pandas path words its own."""
    case = pd.Series({"index": first.index[0], "schema_context": context, "failure_case": value})
    return (table, located, check, int(n), _example(first, case, key, located)[:200])


def _example(df: pd.DataFrame, case: pd.Series, key: list[str], column: str) -> str:
    """What a failing row holds in the checked columns, and where it is (its grain key)."""
    if pd.isna(case["index"]):
        return str(case["failure_case"])
    row = df.loc[case["index"]]
    where = " ".join(f"{k}={_shown(row[k])}" for k in key)
    if case["schema_context"] == "Column":
        what = f"{column}={_shown(case['failure_case'])}"
    else:
        what = " ".join(f"{c}={_shown(row[c])}" for c in column.split(", ") if c in row.index and c not in key)
    return f"{what} at {where}" if where and what else where or what


def _shown(value: object) -> object:
    return "null" if pd.api.types.is_scalar(value) and pd.isna(value) else value
