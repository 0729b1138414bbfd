"""`meterbook config check`: what a meterbook.toml does, and what it misses in a warehouse.

A mapping that matches nothing is as silent as a typo: a namespace spelled as nobody deploys it,
a host that was renamed, a rule whose pattern no tag fits. This prints the effective mappings and,
given a warehouse, the namespaces, hosts and billing lines nothing maps, and the config entries
that match nothing there. Charges resolve through int_charges_teams.sql itself (the one place
teams are resolved), so what it reports is what the chargeback will do.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import one_row, read_sql
from pipelines.config import Config, finding_params
from pipelines.name_folds import name_folds_table
from pipelines.stage_inputs import supplier_rows

SHOWN = 10   # names listed per problem; the rest are counted


def effective(config: Config) -> list[str]:
    """The mappings and rules in force, defaults included, one fact per line."""
    src = f"{config.path} (sha256 {config.sha256})" if config.path else "no config file: the defaults"
    out = [f"Config: {src}",
           f"Tag keys, first match wins: {', '.join(config.tag_keys) or 'none'}",
           f"Spend no team resolves for is shown as: {config.unallocated}"]
    out += _pairs("Namespace -> team", config.namespace_teams)
    out += _pairs("Account -> team (after tags and rules)", config.account_teams)
    rules = [f"  {i}. {r.field + ':' + r.tag_key if r.tag_key else r.field} matches {r.pattern} -> {r.team}"
             for i, r in enumerate(config.team_rules, 1)]
    out += [f"Rules, in order, after tag keys: {len(rules) or 'none'}", *rules]
    out += _pairs("Host -> billed resource", config.hosts)
    out.append("Allocation: " + ", ".join(f"{c} {r}" for c, r in config.allocation.items()))
    if config.weights:
        out.append("  weights: " + ", ".join(f"{t} {w:g}" for t, w in config.weights.items()))
    out.append(f"Telemetry: samples every {config.interval_s:g} s, a gap is longer than "
               f"{config.interval_s * config.gap_multiple:g} s, default grid zone {config.default_zone or 'none'}")
    # the factors exactly as the build applies them (supplier_rows), declared ones with their source
    factors = [f"  {zone} {g:g} g/kWh, {source}" + (f" ({year})" if year else "")
               for _, zone, g, source, year in supplier_rows(config)]
    out += [f"Market-based supplier factors (after instruments): {len(factors) or 'none'}", *factors]
    eng = config.engine
    out.append(f"Engine: {eng.name}" + ("" if eng.name == "duckdb" else
               f", master {eng.master or 'set by the launcher (else local[2])'}, warehouse {eng.warehouse or 'build/spark-warehouse'}"
               + "".join(f", {k} = {v}" for k, v in eng.conf.items())))
    defaults = [p for p in finding_params() if p not in config.findings]
    out.append("Findings thresholds: " + ", ".join([f"{k} {v:g}" for k, v in config.findings.items()]
                                                    + [f"{p} (assumptions.csv)" for p in defaults]))
    return out


def _pairs(title: str, mapping: dict[str, str]) -> list[str]:
    return [f"{title}: {len(mapping) or 'none'}", *(f"  {k} -> {v}" for k, v in mapping.items())]


def against_warehouse(con: duckdb.DuckDBPyConnection, config: Config) -> list[str]:
    """What in the warehouse no mapping reaches, and which config entries reach nothing."""
    from pipelines.stage_inputs import apply_config
    apply_config(con, config)
    out = _charges(con, config) + _telemetry(con)
    unused = _unused(con) + _suppliers_reaching_nothing(con)
    out.append(f"Config entries that match nothing in the warehouse: {len(unused) or 'none'}")
    out += [f"  {u}" for u in unused]
    return out


def _charges(con: duckdb.DuckDBPyConnection, config: Config) -> list[str]:
    built = one_row(con, "select count(*) from duckdb_tables() where table_name = 'int_cost_pool_lines'")[0]
    if not built:
        # owned clusters' cost pool lines exist once a build has run; before it, the bills alone
        con.execute("create or replace temp view int_cost_pool_lines as select * from charges where false")
    # the tag values outside ASCII folded as the build folds them, from the warehouse as it is now
    con.execute(f"create or replace temp table int_tag_values as {read_sql('20_intermediate', 'int_tag_values.sql')}")
    con.register("_folds", name_folds_table(con))
    con.execute("create or replace temp table int_name_folds as select * from _folds")
    con.unregister("_folds")
    resolved = read_sql("20_intermediate", "int_charges_teams.sql")
    con.execute(f"create or replace temp view _check_teams as {resolved}")
    lines, teams = one_row(con, "select count(*), count(distinct team) from _check_teams")
    out = [f"Billing lines: {lines:,}, {teams} teams"]
    by_source = con.execute("select team_source, count(*) from _check_teams group by all order by 2 desc, 1").fetchall()
    out += [f"  resolved by {s}: {n:,} lines" for s, n in by_source if s != "none"]
    unresolved = con.execute("""
        select alloc_category, sum(n)::bigint, string_agg(printf('%s %,.2f', billing_currency, c), ', ' order by billing_currency)
        from (select alloc_category, billing_currency, count(*) as n, sum(billed_cost)::double as c from _check_teams
              where team_source = 'none' group by all)
        group by all order by 1""").fetchall()
    if unresolved:
        out.append(f"  match no tag key, rule or account: {sum(n for _, n, _ in unresolved):,} lines, by [allocation] category:")
        out += [f"    {cat}: {n:,} lines, {cost}: " + (f"stays with team {config.unallocated}" if config.allocation.get(cat) == "unallocated"
                                                    else f"shared over teams ({config.allocation.get(cat)})")
                for cat, n, cost in unresolved]
        keys = con.execute(f"""
            select k, count(*) from (select unnest(map_keys(tags)) as k from _check_teams where team_source = 'none')
            group by k order by 2 desc, 1 limit {SHOWN}""").fetchall()
        if keys:
            out.append("    tag keys they carry, not in tag_keys: " + ", ".join(f"{k} ({n:,} lines)" for k, n in keys))
    tag_teams = con.execute(f"""
        select team, count(*) from _check_teams where team_source like 'tag:%' group by all order by 1 limit {SHOWN * 5}""").fetchall()
    if tag_teams:
        out.append("  teams named by tag values: " + ", ".join(f"{t} ({n:,})" for t, n in tag_teams))
    return out


def _telemetry(con: duckdb.DuckDBPyConnection) -> list[str]:
    ns = con.execute("""
        with seen as (
            select namespace, count(distinct (gpu_uuid, hour_start)) as gpu_h from gpu_pod_parts
            where nullif(namespace, '') is not null group by all
        )
        select namespace, gpu_h from seen s
        where namespace not in (select namespace from cfg_namespace_teams)
            and not exists (select 1 from cfg_team_rules r where r.field = 'namespace' and regexp_matches(s.namespace, r.pattern))
        order by gpu_h desc, namespace""").fetchall()
    total_ns = one_row(con, "select count(distinct namespace) from gpu_pod_parts where nullif(namespace, '') is not null")[0]
    out = [f"Telemetry namespaces: {total_ns}; with no team: {len(ns) or 'none'}"]
    out += _listed(ns, "GPU-hours seen")
    hosts = con.execute("""
        with billed as (select distinct lower(resource_id) as id from charges where resource_id is not null),
        seen as (
            select host, bool_or(lower(instance_id) in (select id from billed)) as by_label,
                count(distinct (gpu_uuid, hour_start)) as gpu_h
            from gpu_hour_parts group by all
        )
        select coalesce(host, '(no host label)'), gpu_h from seen
        where host is null or (host not in (select host from cfg_hosts) and not coalesce(by_label, false)
                               and lower(host) not in (select id from billed))
        order by gpu_h desc, 1""").fetchall()
    total_hosts = one_row(con, "select count(distinct host) from gpu_hour_parts")[0]
    out.append(f"Telemetry hosts: {total_hosts}; matching no billed resource ([hosts], instance id label or host name): "
               f"{len(hosts) or 'none'}")
    out += _listed(hosts, "GPU-hours seen")
    return out


def _listed(rows: list[tuple[Any, Any]], unit: str) -> list[str]:
    out = [f"  {name} ({n:,} {unit})" for name, n in rows[:SHOWN]]
    if len(rows) > SHOWN:
        out.append(f"  ... and {len(rows) - SHOWN} more")
    return out


def _suppliers_reaching_nothing(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The config's supplier factors that name no owned or colocation energy in any month the
    last build matched (int_supplier_reach over its market_basis_month): they apply to nothing,
    and a factor that names only cloud zones leaves their market-based figure the residual mix."""
    built = one_row(con, """select count(*) from duckdb_tables()
                            where table_name in ('market_basis_month', 'int_zone_factors')""")[0]
    if built < 2:
        return []   # before a build there is no matching to read; the build's findings say it then
    rows = con.execute(f"""
        with reach as ({read_sql('20_intermediate', 'int_supplier_reach.sql')})
        select declared_zone, dsum(cloud_kwh), string_agg(distinct cloud_zones, ', ' order by cloud_zones),
               string_agg(month, ', ' order by month)
        from reach group by declared_zone having dsum(scope2_kwh) = 0 order by declared_zone""").fetchall()
    return [f"[[carbon.supplier_factors]] {zone}: applies to no energy in the last build ({months}): "
            + (f"the {kwh:,.1f} kWh in {zones} are cloud GPUs' electricity, the provider's to claim (supplier factors "
               "cover owned and colocation GPUs only), so they take the residual mix" if kwh else
               "no owned or colocation GPUs drew energy in a zone it names")
            for zone, kwh, zones, months in rows]


def _unused(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute("""
        select '[teams.namespaces] ' || namespace || ': no such namespace in telemetry' from cfg_namespace_teams
        where namespace not in (select namespace from gpu_pod_parts where namespace is not null)
        union all
        select '[hosts] ' || host || ': no such host in telemetry' from cfg_hosts
        where host not in (select host from gpu_hour_parts where host is not null)
        union all
        select '[hosts] ' || host || ' -> ' || resource_id || ': no charge for this resource' from cfg_hosts
        where lower(resource_id) not in (select lower(resource_id) from charges where resource_id is not null)
        union all
        select '[teams.accounts] ' || account || ': no such billing, sub or Slurm account' from cfg_account_teams
        where account not in (select sub_account_id from charges where sub_account_id is not null
                              union select billing_account_id from charges where billing_account_id is not null
                              union select account from slurm_jobs where account is not null)
        union all
        select printf('[[teams.rules]] #%d (%s ~ %s): resolves nothing (a tag key or an earlier rule wins, or nothing fits)', r.ord + 1,
                      case when r.field = 'tag' then 'tag:' || r.tag_key else r.field end, r.pattern)
        from cfg_team_rules r
        where not exists (select 1 from _check_teams c where c.team_source = 'rule:' || (r.ord + 1))
            and not (r.field = 'namespace' and exists (select 1 from gpu_pod_parts p
                                                       where regexp_matches(p.namespace, r.pattern)))
        order by 1""").fetchall()
    return [r[0] for r in rows]
