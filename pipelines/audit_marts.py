"""Marts the footprint audit reads for a month's teams, computed in the build (reports compute
no figure): each team's IT-energy bounds and embodied CO2e of its billed GPU-hours
(team_audit_month; the rest of a team's figures are team_month's) and the one-at-a-time
sensitivity behind the audit's tornado charts (team_sensitivity_month).

Embodied CO2e goes through the reconstruct engine's estimator, so a team and a disclosure
amortize hardware alike; its range is the engine's interval bounds (pipelines.reconstruct.sampling.bounds),
the same meaning as every other range of a month (team_month's *_low/_high): each assumption at
the end of its stated range that lowers the figure, then at the end that raises it.
"""
from __future__ import annotations

from collections import defaultdict

import duckdb
import pandas as pd

from pipelines.reconstruct import coefficients_by_id, embodied_for_hours, tornado_of_parts
from pipelines.reconstruct.sampling import bounds, tornado

AUDIT_COLUMNS = {"month": "string", "team": "string", "it_energy_kwh_low": "float64", "it_energy_kwh_high": "float64",
                 "it_energy_kwh_estimated_low": "float64", "it_energy_kwh_estimated_high": "float64",
                 "gpu_hours_unknown_model": "float64", "co2e_embodied_kg": "float64", "co2e_embodied_kg_low": "float64",
                 "co2e_embodied_kg_high": "float64", "embodied_method": "string", "embodied_assumption_ids": "string"}
SENSITIVITY_COLUMNS = {"month": "string", "team": "string", "meter": "string", "assumption": "string",
                       "low": "float64", "high": "float64"}
ID_SEPARATOR = ";"


def _frame(rows: list[dict], columns: dict[str, str]) -> pd.DataFrame:
    """Rows as a frame with the mart's dtypes, also when there are none (an empty month)."""
    return pd.DataFrame(rows, columns=list(columns)).astype(columns)


def _hours_by_gpu(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dict[str | None, float]]:
    """{(month, team): {gpu_model: billed GPU-hours}}; None for a resource of unknown model."""
    out: dict[tuple[str, str], dict[str | None, float]] = defaultdict(dict)
    for month, team, model, hours in con.execute("""
            select month, team, gpu_model, sum(gpu_hours) from team_gpu_model_month
            group by all having sum(gpu_hours) > 0 order by month, team, gpu_model nulls last""").fetchall():
        out[(month, team)][model] = hours
    return out


def _energy_lines(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], list[dict]]:
    lines: dict[tuple[str, str], list[dict]] = defaultdict(list)
    cur = con.execute("select * from team_energy_lines order by all")
    names = [d[0] for d in cur.description]
    for values in cur.fetchall():
        line = dict(zip(names, values))
        lines[(line["month"], line["team"])].append(line)
    return lines


def _sum(lines: list[dict], key: str, basis: str | None = None) -> float:
    return sum(line[key] or 0.0 for line in lines if basis is None or line["basis"] == basis)


def team_audit_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per team_month row: the bounds of its IT energy, all and estimated (the sums of its
    energy lines' bounds), and amortized embodied CO2e of its billed GPU-hours with its bounds,
    how it was built and the coefficients it rests on (null: no GPU-hours in the month)."""
    lines, hours_by_gpu = _energy_lines(con), _hours_by_gpu(con)
    rows = []
    for month, team in con.execute("select distinct month, team from team_month order by all").fetchall():
        mine = lines.get((month, team), [])
        row = {"month": month, "team": team, "it_energy_kwh_low": _sum(mine, "it_energy_kwh_low"),
               "it_energy_kwh_high": _sum(mine, "it_energy_kwh_high"),
               "it_energy_kwh_estimated_low": _sum(mine, "it_energy_kwh_low", "estimated"),
               "it_energy_kwh_estimated_high": _sum(mine, "it_energy_kwh_high", "estimated")}
        if hours := hours_by_gpu.get((month, team)):
            q, how = embodied_for_hours(hours)
            low, high = bounds(q)
            row |= {"gpu_hours_unknown_model": hours.get(None, 0.0), "co2e_embodied_kg": q.value,
                    "co2e_embodied_kg_low": low, "co2e_embodied_kg_high": high, "embodied_method": how,
                    "embodied_assumption_ids": ID_SEPARATOR.join(sorted(q.ids))}
        rows.append(row)
    return _frame(rows, AUDIT_COLUMNS)


def line_ids(line: dict, meter_ids: tuple[str, ...]) -> list[str]:
    """The coefficients one energy line's meter rests on: its IT energy's, then `meter_ids`
    (PUE, grid intensity) as the line names them."""
    return [*(line["energy_assumption_ids"] or []), *(line[k] for k in meter_ids if line[k])]


def team_sensitivity_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per month x team x meter x assumption: the meter with that assumption at its low
    and at its high, the others central (location-based CO2e from the team's energy lines,
    embodied CO2e from its GPU-hours)."""
    coefficients = coefficients_by_id()
    lines = _energy_lines(con)
    rows = []
    for month, team, co2e_kg in con.execute("select month, team, sum(co2e_kg) from team_month group by all order by all").fetchall():
        parts = [(line["co2e_kg"] or 0.0, line_ids(line, ("pue_id", "intensity_id"))) for line in lines.get((month, team), [])]
        rows += [{"month": month, "team": team, "meter": "co2e_location_kg", **r}
                 for r in tornado_of_parts(co2e_kg, parts, coefficients)]
    for (month, team), hours in _hours_by_gpu(con).items():
        rows += [{"month": month, "team": team, "meter": "co2e_embodied_kg", **r} for r in tornado(embodied_for_hours(hours)[0])]
    return _frame(rows, SENSITIVITY_COLUMNS)
