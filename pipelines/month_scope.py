"""Which months a build must rebuild, and the loaded rows each month's figures rest on.

A month's figures depend on the rows that month reads (its charges, its GPU-hours and the few
hours across its boundaries, its runs, invoices, work-log windows...), on the config, the
reference data and the models. The build keeps a fingerprint of each month's rows (the files
they come from, by sha256 and status; a boundary hour of another month by its content) and of
everything shared; a month whose fingerprint is unchanged is neither read nor rewritten. A file
landing in a closed month, or a delivery restated, changes that month's fingerprint; a change
to the config, the reference data or the models changes every month's.

The models then run over stand-ins of the loaded tables (temp views of the same names) that
hold only the rows of the months being rebuilt; their output replaces those months' rows.
"""
from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass, field
from typing import Callable, Iterable

import duckdb

from core.sql import read_sql, sql_files

# The loaded tables a month reads, with the month(s) each row feeds: (row id, file, month,
# content hash for a row read by another month than its own, else null). '*' feeds every month
# (an instrument without a period). {t} is the table, qualified with the warehouse's name.
# A GPU-hour read by another month than its own is in that month's fingerprint by its content,
# every column but the file (*columns: one hash of them all); the hours of their own month alone,
# nearly all of them, are not hashed.
_TEL = ("select p.rowid as rid, p.file_id, s.month, case when s.month <> strftime(p.hour_start, '%Y-%m') "
        "then hash(*columns(p.* exclude (file_id))) end as ctx from {t} p join _scope_tel s using (gpu_uuid, hour_start)")
_SPAN = ("select t.rowid as rid, t.file_id, coalesce(strftime(m.m, '%Y-%m'), '*') as month, null::ubigint as ctx from {t} t "
         "left join lateral (select unnest(generate_series(date_trunc('month', t.period_start), "
         "t.period_end - interval 1 second, interval 1 month)) as m) m on true")
# Tables whose row feeds one month, given by an expression: filtered by it, with no row-level
# mapping (a month of CUR is tens of millions of lines, and its rows lie together in the file).
MONTH_EXPR: dict[str, str] = {
    "charges": "strftime(coalesce(billing_period_start, charge_period_start), '%Y-%m')",
    "invoices": "period",
    "grid_hours": "strftime(hour_start, '%Y-%m')",
    "provider_carbon": "usage_month",
    "gpu_request_parts": "strftime(hour_start, '%Y-%m')",
    "dcgm_job_stats": "strftime(start_utc, '%Y-%m')",
}
# Tables of a billing file's rows beside its charges (as many rows): filtered by the files whose
# charges the months hold; the file's sha256 is in those months' fingerprints already.
BILLING_FILE_TABLES = ("focus_allocations", "charge_contracts", "charge_source_columns", "focus_origin_charges")
ROW_MONTHS: dict[str, str] = {
    "gpu_hour_parts": _TEL,
    "gpu_pod_parts": _TEL,
    # a CodeCarbon run is its last snapshot, whichever file and month holds it (run_month): every
    # snapshot of a run is read by every month one of them ends in
    "runs": ("with keyed as (select rowid as rid, file_id, end_utc, coalesce(run_key, file_id::varchar || ':' || row_number::varchar) as k "
             "from {t}) select r.rid, r.file_id, m.month, null::ubigint as ctx from keyed r join "
             "(select distinct k, strftime(end_utc, '%Y-%m') as month from keyed) m using (k)"),
    "instruments": _SPAN,
    # a day's rate feeds its month and, for the day rule's lookback, the month its last
    # fx_lookback_days reach into; a rate stated for a month feeds that month
    "exchange_rates": ("select t.rowid as rid, t.file_id, coalesce(strftime(m.m, '%Y-%m'), t.rate_month) as month, "
                       "null::ubigint as ctx from {t} t left join lateral (select unnest(generate_series("
                       "date_trunc('month', t.rate_date), date_trunc('month', t.rate_date + to_days("
                       "getvariable('fx_lookback_days')::integer)), interval 1 month)) as m) m on t.rate_date is not null "
                       # rates convert charges: a month without charges is not made one by its rates
                       "where coalesce(strftime(m.m, '%Y-%m'), t.rate_month) in (select month from _scope_files_charges)"),
    # an invoice's detail lines feed the invoice's month (every month while the invoice is not loaded)
    "invoice_details": ("select d.rowid as rid, d.file_id, coalesce(i.period, '*') as month, null::ubigint as ctx "
                        "from {t} d left join (select distinct invoice_id, period from {invoices}) i using (invoice_id)"),
    # a Slurm job feeds every month its window reaches; one never started, none
    "slurm_jobs": ("select j.rowid as rid, j.file_id, strftime(g.m, '%Y-%m') as month, null::ubigint as ctx from {t} j, "
                   "unnest(generate_series(date_trunc('month', j.start_utc), date_trunc('month', j.end_utc - interval 1 microsecond), "
                   "interval 1 month)) g (m) where j.start_utc is not null and j.end_utc > j.start_utc"),
    "contract_commitments": _SPAN,
    # a work-log window restated by a later file: every version is read by every month any
    # version reaches (the latest one wins in int_job_windows)
    "work_log": ("select w.rowid as rid, w.file_id, k.month, null::ubigint as ctx from {t} w join ("
                 "select distinct job_id, start_utc, strftime(g.m, '%Y-%m') as month from {t}, "
                 "unnest(generate_series(date_trunc('month', start_utc), date_trunc('month', end_utc - interval 1 microsecond), "
                 "interval 1 month)) g (m)) k using (job_id, start_utc)"),
}
# Tables no month owns (published disclosures): what reads them is rebuilt when they change.
UNDATED_INPUTS = ("disclosures",)
# The ingest's own records (files, rejects, findings): read whole, by file id; a month's files
# are in its fingerprint through the tables above.
LEDGER_TABLES = ("source_files", "rejects", "row_findings", "findings")

# The month of a model's row, where it is not the `month` column.
MONTH_OF = {
    "int_gpu_hours": "strftime(hour_start, '%Y-%m')",
    "int_gpu_workloads": "strftime(hour_start, '%Y-%m')",
    "int_gpu_shares": "strftime(hour_start, '%Y-%m')",
    "int_grid_hours": "strftime(hour_start, '%Y-%m')",
    "int_cost_pool_lines": MONTH_EXPR["charges"],   # charge lines, dated as billed ones
}
# Models without a month, and how their table is kept:
# replaced  from the config and reference data alone, or from the scoped inputs and read only by
#           the months built with it (exchange rates: each month's marts keep the rates they used)
# merged    a row per key found in the months built (zones billed); rows of other months stay
# after     read every month's marts (the published disclosures and their reconstructions):
#           rebuilt over the whole warehouse once the months are in
REPLACED = frozenset({"int_findings_params", "int_whatif_params", "int_fx_rates"})
MERGED = frozenset({"int_zone_factors", "int_tag_values", "int_name_folds"})   # zones billed, tag values outside ASCII
AFTER = frozenset({"audit_disclosures", "audit_reconstructions"})
UNDATED = REPLACED | MERGED | AFTER
# Dated models a later model reads at another month's hours: an hour filled from a counter gap
# takes the workload shares of the last hour observed before the gap (int_gpu_hours' share_hour),
# which may lie in the month before. Their rows of the months read across a boundary are kept
# until every model is built, as a build of every month has them.
READ_ACROSS = frozenset({"int_gpu_shares"})


@dataclass
class Scope:
    """What a build rebuilds: `rebuilt` months (their inputs changed or were never built),
    `removed` (built before, nothing loaded for them now), `full` when the shared inputs changed
    (every table is written anew), `undated` when the AFTER models must run."""
    months: list[str]
    rebuilt: list[str]
    removed: list[str]
    full: bool
    undated: bool
    fingerprints: dict[str, str] = field(default_factory=dict)
    shared: str = ""


STATE = "build_months"   # month, inputs_sha256 ('' for the shared inputs, '-' for undated ones)


def qualified(con: duckdb.DuckDBPyConnection, table: str) -> str:
    db = con.execute("select current_database()").fetchone()
    return f'"{db[0] if db else "memory"}".main.{table}'


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The names of the connection's tables that are not temporary. A catalog query costs 5 ms
    however narrow its filter: ask once for all of them, not once a table."""
    return {r[0] for r in con.execute("select table_name from duckdb_tables() where not temporary").fetchall()}


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return table in _tables(con)


def map_rows(con: duckdb.DuckDBPyConnection, month_expr: dict[str, str] | None = None) -> None:
    """_scope_files_<table> (month, file_id, ctx, rows) for every loaded table a month reads,
    and _scope_rows_<table> (rid, file_id, month, ctx) for those a row of which feeds several.
    `month_expr` replaces MONTH_EXPR's expressions (a column that holds the month already)."""
    con.execute(f"create or replace temp table _scope_tel as {read_sql('05_scope', 'scope_telemetry_hours.sql')}".replace(
        "from gpu_hour_parts", f"from {qualified(con, 'gpu_hour_parts')}"))
    for table, expr in {**MONTH_EXPR, **(month_expr or {})}.items():
        con.execute(f"create or replace temp table _scope_files_{table} as select {expr} as month, file_id, null::ubigint as ctx, "
                    f"count(*) as n from {qualified(con, table)} group by all")
    con.execute("create or replace temp table _scope_billing_files as select distinct file_id, month from _scope_files_charges")
    for table, sql in ROW_MONTHS.items():
        con.execute(f"create or replace temp table _scope_rows_{table} as {sql.format(t=qualified(con, table), invoices=qualified(con, 'invoices'))}")
        con.execute(f"create or replace temp table _scope_files_{table} as select month, file_id, ctx, count(*) as n "
                    f"from _scope_rows_{table} group by all")


def fingerprints(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Each month's inputs as one sha256: the files of its rows (sha256 and status), and the
    content of the rows it reads from other months' files."""
    parts = " union all ".join(
        f"select '{t}' as tbl, month, file_id, ctx, n from _scope_files_{t}" for t in [*MONTH_EXPR, *ROW_MONTHS])
    rows = con.execute(f"""
        with r as (select tbl, month, file_id, ctx, sum(n) as n from ({parts}) group by all),
        named as (
            -- a row without a lineage row (written by hand, not by ingest) counts by its file id
            select r.month, concat_ws(':', r.tbl, coalesce(r.ctx::varchar, s.sha256 || ':' || s.status, r.file_id::varchar), r.n) as item
            from r left join {qualified(con, 'source_files')} s using (file_id)
        ),
        everywhere as (select item from named where month = '*'),
        months as (select distinct month from named where month <> '*'),
        items as (
            select month, item from named where month <> '*'
            union all
            select m.month, e.item from months m, everywhere e
        )
        select month, sha256(string_agg(distinct item, ',' order by item)) from items group by month""").fetchall()
    return {m: h for m, h in rows}


def undated_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    items = []
    for table in UNDATED_INPUTS:
        items += con.execute(f"select distinct '{table}:' || s.sha256 || ':' || s.status from {qualified(con, table)} t "
                             f"join {qualified(con, 'source_files')} s using (file_id) order by 1").fetchall()
    return hashlib.sha256("\n".join(i[0] for i in items).encode()).hexdigest()


def shared_fingerprint(con: duckdb.DuckDBPyConnection, variables: dict[str, object], code: Iterable[object]) -> str:
    """The config (variables and cfg_ tables), the reference data and the models as one sha256."""
    h = hashlib.sha256(repr(sorted(variables.items())).encode())
    tables = [r[0] for r in con.execute("select table_name from duckdb_tables() where table_name like 'ref\\_%' escape '\\' "
                                        "or table_name like 'cfg\\_%' escape '\\' order by 1").fetchall()]
    # every table's columns in one catalog query (one per table cost 11 ms each, 34 tables)
    columns = dict(con.execute("select table_name, string_agg(column_name || ' ' || data_type, ',' order by column_index) "
                               "from duckdb_columns() where list_contains(?, table_name) group by 1", [tables]).fetchall())
    for t in tables:
        total = con.execute(f"select count(*), sum(hash(x)) from {t} x").fetchone()
        h.update(f"{t}|{(columns.get(t),)}|{total}".encode())
    for folder in ("05_scope", "20_intermediate", "30_marts"):
        for name in sql_files(folder):
            h.update(read_sql(folder, name).encode())
    for obj in code:
        h.update(inspect.getsource(obj).encode())   # type: ignore[arg-type]
    return h.hexdigest()


def plan(con: duckdb.DuckDBPyConnection, shared: str, models: Iterable[str],
         built: Callable[[str], bool] | None = None) -> Scope:
    """Compare this build's fingerprints with the last build's (STATE); `built(model)` says
    whether a model's table is kept (default: a table of the warehouse)."""
    now = fingerprints(con)
    undated = undated_fingerprint(con)
    before: dict[str, str] = {}
    tables = _tables(con)
    if STATE in tables:
        before = dict(con.execute(f"select month, inputs_sha256 from {qualified(con, STATE)}").fetchall())
    months = sorted(now)
    full = before.get("") != shared or not all((built or tables.__contains__)(m) for m in models)
    rebuilt = months if full else [m for m in months if before.get(m) != now[m]]
    removed = sorted(m for m in before if m not in now and m not in ("", "-"))
    return Scope(months, rebuilt, removed, full, full or bool(rebuilt or removed) or before.get("-") != undated,
                 {**now, "": shared, "-": undated}, shared)


def record(con: duckdb.DuckDBPyConnection, scope: Scope) -> None:
    con.execute(f"create or replace table {qualified(con, STATE)} (month varchar, inputs_sha256 varchar)")
    con.executemany(f"insert into {qualified(con, STATE)} values (?, ?)", sorted(scope.fingerprints.items()))


def restrict_inputs(con: duckdb.DuckDBPyConnection, months: list[str]) -> None:
    """Temp views named as the loaded tables, holding only the rows the months read."""
    con.execute("create or replace temp table _scope_months as select unnest(?::varchar[]) as month", [[*months, "*"]])
    for table, expr in MONTH_EXPR.items():
        con.execute(f"create or replace temp view {table} as select * from {qualified(con, table)} "
                    f"where {expr} in (select month from _scope_months)")
    for table in BILLING_FILE_TABLES:
        con.execute(f"create or replace temp view {table} as select * from {qualified(con, table)} where file_id in "
                    "(select file_id from _scope_billing_files where month in (select month from _scope_months))")
    for table in ROW_MONTHS:
        con.execute(f"create or replace temp view {table} as select * from {qualified(con, table)} where rowid in "
                    f"(select rid from _scope_rows_{table} where month in (select month from _scope_months))")


def files_read(con: duckdb.DuckDBPyConnection, table: str, months: list[str]) -> list[int]:
    """The files whose rows the months read, of a table a row of which feeds several months
    (ROW_MONTHS) or of a billing file's side tables (BILLING_FILE_TABLES)."""
    scoped = "_scope_billing_files" if table in BILLING_FILE_TABLES else f"_scope_files_{table}"
    return [r[0] for r in con.execute(f"select distinct file_id from {scoped} where list_contains(?::varchar[], month) "
                                      "order by 1", [[*months, "*"]]).fetchall()]


def hours_outside(con: duckdb.DuckDBPyConnection, months: list[str]) -> list[tuple]:
    """The GPU-hours (gpu_uuid, hour_start) the months read that lie in other months (near a
    boundary: scope_telemetry_hours.sql)."""
    return con.execute("select distinct gpu_uuid, hour_start from _scope_tel where list_contains($m::varchar[], month) "
                       "and not list_contains($m::varchar[], strftime(hour_start, '%Y-%m')) order by all",
                       {"m": months}).fetchall()


def month_of(model: str) -> str:
    return MONTH_OF.get(model, "month")


def prune(con: duckdb.DuckDBPyConnection, model: str, months: list[str]) -> None:
    """Drop the rows a model built for months outside the scope (hours read across a boundary)."""
    if model not in UNDATED:
        con.execute(f"delete from temp.main.{model} where not coalesce(list_contains(?::varchar[], {month_of(model)}), false)",
                    [months])


def merge(con: duckdb.DuckDBPyConnection, model: str, scope: Scope) -> None:
    """Write a model's rebuilt months (temp table of its name) into the warehouse's table."""
    target = qualified(con, model)
    if scope.full or model in REPLACED or not _exists(con, model):
        con.execute(f"create or replace table {target} as select * from temp.main.{model}")
    elif model in MERGED:
        con.execute(f"insert into {target} by name (select * from temp.main.{model} except select * from {target})")
    else:
        con.execute(f"delete from {target} where list_contains(?::varchar[], {month_of(model)})", [scope.rebuilt + scope.removed])
        con.execute(f"insert into {target} by name select * from temp.main.{model}")


def forget_scope(con: duckdb.DuckDBPyConnection, models: Iterable[str]) -> None:
    """Drop the stand-ins and rebuilt tables, so what follows reads the warehouse."""
    for table in [*MONTH_EXPR, *BILLING_FILE_TABLES, *ROW_MONTHS]:
        con.execute(f"drop view if exists temp.main.{table}")
        con.execute(f"drop table if exists temp.main._scope_rows_{table}")
        con.execute(f"drop table if exists temp.main._scope_files_{table}")
    for name in ("_scope_tel", "_scope_billing_files", "_scope_months", *models):
        con.execute(f"drop table if exists temp.main.{name}")


# team_month (and its reporting-currency twin) compares each month with the one before: rebuilding a month changes the next
# month's comparison columns, and only those; they are recomputed from the warehouse's rows.
PREVIOUS_MONTH = """
create or replace temp table _prev as
select j.month, j.team, j.currency,
    p.billed_cost as billed_cost_prev_month,
    j.billed_cost - p.billed_cost as billed_cost_change,
    j.effective_cost - p.effective_cost as effective_cost_change,
    j.facility_energy_kwh - p.facility_energy_kwh as facility_energy_kwh_change
from {t} j
left join {t} p on p.team = j.team and p.currency is not distinct from j.currency
    and p.month = strftime(strptime(j.month, '%Y-%m') - interval 1 month, '%Y-%m')
where list_contains($rebuilt::varchar[], j.month)
    or list_contains($changed::varchar[], strftime(strptime(j.month, '%Y-%m') - interval 1 month, '%Y-%m'))
"""
PREVIOUS_MONTH_TABLES = ("team_month", "team_month_reporting")
PREVIOUS_COLUMNS = ("billed_cost_prev_month", "billed_cost_change", "effective_cost_change", "facility_energy_kwh_change")


def refresh_previous_month(con: duckdb.DuckDBPyConnection, scope: Scope) -> list[str]:
    """The previous-month columns (team_month, and team_month_reporting in the reporting
    currency) for the months rebuilt and the months after them; returns the months whose rows
    changed though their inputs did not."""
    patched: set[str] = set()
    for table in PREVIOUS_MONTH_TABLES:
        if not _exists(con, table):
            continue
        t = qualified(con, table)
        con.execute(PREVIOUS_MONTH.format(t=t), {"rebuilt": scope.rebuilt, "changed": scope.rebuilt + scope.removed})
        sets = ", ".join(f"{c} = p.{c}" for c in PREVIOUS_COLUMNS)
        differs = " or ".join(f"t.{c} is distinct from p.{c}" for c in PREVIOUS_COLUMNS)
        patched |= {m for (m,) in con.execute(
            f"update {t} t set {sets} from _prev p where p.month = t.month and p.team = t.team "
            f"and p.currency is not distinct from t.currency and ({differs}) returning t.month").fetchall()}
        con.execute("drop table temp.main._prev")
    return sorted(patched - set(scope.rebuilt))
