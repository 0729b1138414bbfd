"""The GHG scope split of a month's footprint (mart scope_month), computed in the build.

Grain: month x team x ownership (cloud, colocation, on-premises). Who owns the hardware decides
the scope (int_resource_ownership applies the rule; GHG Protocol Scope 2 Guidance, 2015, chapter 5; Corporate Value Chain (Scope 3)
Standard, 2011, chapter 5, category 1):

- a rented cloud instance is a purchased service: its electricity and its embodied emissions are
  both the customer's Scope 3, category 1 (purchased goods and services), shown location- and
  market-based like electricity;
- owned or controlled equipment (on-premises, colocation) draws electricity the organisation buys
  for itself: Scope 2, reported location- and market-based. Its embodied CO2e here is amortised
  by GPU-hour over the hardware life, an allocation to use (SCI's M) in no scope, reported beside
  the inventory: Scope 3, category 2 (capital goods) counts the whole cradle-to-gate emissions of
  what was acquired in the year of acquisition, and needs acquisitions no input holds.

Each figure is the sum of the team's energy lines (team_energy_lines) of that ownership, and the
embodied CO2e of its GPU-hours on that ownership through the reconstruct engine's estimator, so
the rows of a team add up to its team_month and team_audit_month figures, bounds included
(interval bounds add up).
"""
from __future__ import annotations

from collections import defaultdict

import duckdb
import pandas as pd

from pipelines.reconstruct import embodied_for_hours
from pipelines.reconstruct.sampling import bounds

RANGED = ("facility_energy_kwh", "co2e_kg", "co2e_market_kg")
COLUMNS = {"month": "string", "team": "string", "ownership": "string", "electricity_scope": "string",
           "embodied_scope": "string", "ownership_source": "string", "gpu_hours": "float64",
           **{f"{m}{s}": "float64" for m in (*RANGED, "co2e_embodied_kg") for s in ("", "_low", "_high")}}


def _energy(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str, str], dict[str, float | None]]:
    """{(month, team, ownership): sums of the energy lines' meters}; a sum is null (unknown) when
    any line's is: a zone without a market factor leaves its market-based figure unknown."""
    cols = [f"{m}{s}" for m in RANGED for s in ("", "_low", "_high")]
    sums = ", ".join(f"case when count(*) = count(e.{c}) then sum(e.{c}) end as {c}" for c in cols)
    out = {}
    for row in con.execute(f"""
            select e.month, e.team, e.ownership, {sums}
            from team_energy_lines e
            group by all order by all""").fetchall():
        out[row[:3]] = dict(zip(cols, row[3:]))
    return out


def _hours(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str, str], dict[str | None, float]]:
    """{(month, team, ownership): {gpu_model: billed GPU-hours}} (team_gpu_model_month)."""
    out: dict[tuple[str, str, str], dict[str | None, float]] = defaultdict(dict)
    for month, team, ownership, model, hours in con.execute("""
            select month, team, ownership, gpu_model, gpu_hours from team_gpu_model_month
            where gpu_hours > 0 order by month, team, ownership, gpu_model nulls last""").fetchall():
        out[(month, team, ownership)][model] = hours
    return out


def _ownerships(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dict[str, str]]:
    """{(month, ownership): its scopes (int_resource_ownership decides them) and what decided it}."""
    cur = con.execute("""select month, ownership, any_value(electricity_scope) as electricity_scope,
                                any_value(embodied_scope) as embodied_scope,
                                string_agg(distinct ownership_source, '; ' order by ownership_source) as ownership_source
                         from int_resource_ownership group by all""")
    return {(r[0], r[1]): dict(zip([d[0] for d in cur.description][2:], r[2:])) for r in cur.fetchall()}


def _sources(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str, str], str]:
    """{(month, team, ownership): what decided the ownership of the resources its lines are on}."""
    return {r[:3]: r[3] for r in con.execute("""
        select e.month, e.team, e.ownership, string_agg(distinct o.ownership_source, '; ' order by o.ownership_source)
        from team_energy_lines e
        join int_resource_ownership o on o.month = e.month and coalesce(o.resource_id, '') = coalesce(e.resource_id, '')
        group by all""").fetchall()}


def scope_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per month, team and ownership with energy or GPU-hours: its electricity (facility
    energy, location- and market-based CO2e) and embodied CO2e, each with its bounds and scope."""
    energy, hours, ownerships, sources = _energy(con), _hours(con), _ownerships(con), _sources(con)
    rows = []
    for key in sorted(set(energy) | set(hours)):
        month, team, ownership = key
        # GPU-hours with no energy line (a GPU model without a TDP) fall back to the ownership's sources
        row: dict = {"month": month, "team": team, "ownership": ownership, **ownerships[(month, ownership)], **energy.get(key, {})}
        row["ownership_source"] = sources.get(key, row["ownership_source"])
        if h := hours.get(key):
            q, _how = embodied_for_hours(h)
            low, high = bounds(q)
            row |= {"gpu_hours": sum(h.values()), "co2e_embodied_kg": q.value, "co2e_embodied_kg_low": low,
                    "co2e_embodied_kg_high": high}
        rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(COLUMNS)
