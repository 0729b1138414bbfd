"""A month's CO2e three ways, for the chargeback and the audit (templates/partials/carbon_basis.html):
location-based on annual factors and hour by hour, side by side with the share of energy an hourly
figure covered, and market-based with what it rests on (instruments, supplier factors, residual
mix, each with its source and year). Reads marts only: team_month, carbon_month, market_basis_month.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import rows_as_dicts, table_exists

TEAM_COLUMNS = ("facility_energy_kwh", "co2e_kg", "co2e_kg_low", "co2e_kg_high", "co2e_hourly_kg", "co2e_hourly_kg_low",
                "co2e_hourly_kg_high", "facility_energy_kwh_hourly", "co2e_market_kg", "co2e_market_kg_low",
                "co2e_market_kg_high", "facility_energy_kwh_market_na")


def carbon_context(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, Any]:
    """{'teams', 'totals', 'zones', 'basis', 'hourly_share'}; empty lists for a warehouse built
    before these marts existed."""
    if not table_exists(con, "carbon_month"):
        return {"teams": [], "totals": {}, "zones": [], "basis": [], "hourly_share": None}
    teams = rows_as_dicts(con, f"""
        select team, {', '.join(f'sum({c}) as {c}' for c in TEAM_COLUMNS)}
        from team_month where month = ? group by team
        having sum(facility_energy_kwh) > 0 order by sum(co2e_kg) desc, team""", [month])
    for t in teams:
        t["hourly_share"] = t["facility_energy_kwh_hourly"] / t["facility_energy_kwh"] if t["facility_energy_kwh"] else None
        # a team whose energy sits partly in a zone without a market-based factor has no total
        t["market_complete"] = not t["facility_energy_kwh_market_na"]
    totals = {c: sum(t[c] or 0 for t in teams) for c in TEAM_COLUMNS}
    totals["hourly_share"] = totals["facility_energy_kwh_hourly"] / totals["facility_energy_kwh"] if totals["facility_energy_kwh"] else None
    totals["market_complete"] = all(t["market_complete"] for t in teams)
    zones = rows_as_dicts(con, "select * from carbon_month where month = ? order by zone", [month])
    basis = rows_as_dicts(con, """select zone, electricity_scope, claim_kind, claim, instrument_type, source, year, g_per_kwh,
                                         coefficient_id, available_kwh, applied_kwh, excess_kwh, co2e_kg
                                  from market_basis_month where month = ?
                                  order by zone nulls last, electricity_scope, claim_kind, claim""", [month])
    # the GHG Protocol scopes the month's CO2e falls in, by who owns the hardware (scope_month)
    scopes = rows_as_dicts(con, """
        select ownership, any_value(electricity_scope) as electricity_scope, any_value(embodied_scope) as embodied_scope,
               sum(co2e_kg) as co2e_kg, sum(co2e_market_kg) as co2e_market_kg
        from scope_month where month = ? group by ownership order by ownership""", [month]) \
        if table_exists(con, "scope_month") else []
    return {"teams": teams, "totals": totals, "zones": zones, "basis": basis, "hourly_share": totals["hourly_share"],
            "scopes": scopes}
