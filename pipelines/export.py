"""`meterbook export`: marts out as Parquet (exact: DECIMAL money, typed timestamps) and CSV
(plain notation). Exports read marts and never compute: a figure here is the one the reports show.
The FOCUS CSV carries the provider's decimals as the Parquet does (FOCUS columns are data, and
unit price x quantity must still meet the cost); the other CSVs print money in its currency's
minor unit, as an invoice would.

- focus: the month's charges as FOCUS 1.2, 1.3 or 1.4, energy, carbon and allocation in x_
  columns, in 1.3 and later the allocation also as split cost allocation rows; a column the
  FOCUS input had is carried as it was (focus_export, focus_allocated marts).
- allocation: the line-level allocation under team_month (allocation_day mart).
"""
from __future__ import annotations

from pathlib import Path

import duckdb

from core.atomic import replacing_set
from core.csv_amounts import amount_sql, exact_sql, minor_units
from core.csv_out import copy_csv, copy_parquet
from core.errors import InputError
from core.figures import settled_sql
from core.sql import ident, literal, one_row
from core.vocabulary import METERS

# FOCUS money columns, each in the currency named beside it; the rest of the decimals (unit
# prices, quantities) are not amounts and keep their precision.
FOCUS_MONEY = {"BilledCost": "BillingCurrency", "EffectiveCost": "BillingCurrency", "ListCost": "BillingCurrency",
               "ContractedCost": "BillingCurrency", "PricingCurrencyEffectiveCost": "PricingCurrency",
               # the line in the reporting currency, beside BilledCost in the billing one
               "x_BilledCostInReportingCurrency": "x_ReportingCurrency",
               "x_EffectiveCostInReportingCurrency": "x_ReportingCurrency"}
# x_ measures and the allocation meter whose quantum they print in
FOCUS_MEASURES = {"x_EnergyKwh": "facility_energy_kwh", "x_EnergyKwhLow": "facility_energy_kwh_low",
                  "x_EnergyKwhHigh": "facility_energy_kwh_high", "x_CO2eKg": "co2e_kg", "x_CO2eKgLow": "co2e_kg_low",
                  "x_CO2eKgHigh": "co2e_kg_high", "x_GpuHours": "gpu_hours"}
# FOCUS 1.2: date/times are ISO 8601 UTC with a Z (datetime_format.md)
FOCUS_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# FOCUS version -> (the mart it is written from, the mart's columns that version does not have).
# 1.2: the charges as delivered, the allocation in x_ columns. 1.3: adds the split cost
# allocation columns (a line the chargeback splits over teams becomes allocated charges),
# ServiceProviderName, HostProviderName and ContractApplied; ProviderName and PublisherName are
# deprecated there and gone in 1.4.
FOCUS_VERSIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "1.2": ("focus_export", ()),
    "1.3": ("focus_allocated", ()),
    "1.4": ("focus_allocated", ("ProviderName", "PublisherName")),
}
NEWEST_FOCUS = "1.4"
# mart columns that are no FOCUS column (the month filter, the allocation key, the input's x_ map)
MART_ONLY = ("month", "source_group", "x_source_columns")
ALLOCATION_COLUMNS = ("month", "day", "team", "resource_id", "namespace", "workload", "rule", "sharing_mode", "split_rule",
                      "meter", "amount", "unit", "amount_reporting", "reporting_currency",
                      "source_sha256", "source_row", "source_line")


def export_focus(con: duckdb.DuckDBPyConnection, month: str, out: Path, version: str = NEWEST_FOCUS) -> list[Path]:
    """Write <out>.parquet and <out>.csv (out without suffix, or with either suffix) as FOCUS
    `version` (FOCUS_VERSIONS) from its mart (the build step writes it). The input's own x_
    columns ride in the mart as one map (their names differ per file) and come out as columns of
    their own."""
    mart, dropped = FOCUS_VERSIONS[version]
    _needs_rows(con, mart, month, "charges")
    types = {c: t for c, t in _types(con, mart).items() if c not in (*MART_ONLY, *dropped)}
    extra = [r[0] for r in con.execute(
        f"select distinct unnest(map_keys(x_source_columns)) from {mart} where month = ? order by 1", [month]).fetchall()]
    carried = "".join(f", x_source_columns[{literal(k)}] as {ident(k)}" for k in extra
                      if k.lower() not in {c.lower() for c in types})
    # an origin charge's allocated rows together, the allocation's order within (share, team)
    order = "x_SourceFileSha256, x_SourceRow, x_SourceLine" + (", x_AllocatedShare desc, x_Team, x_AllocationRule"
                                                               if mart != "focus_export" else "")
    rows = f"select {', '.join(ident(c) for c in types)}{carried} from {mart} where month = ? order by {order}"
    # every decimal exact, plain, without trailing zeros (32.772600000000 -> 32.7726: summed, the
    # CSV's BilledCost is the reconciled total, not a sum of cents); energy and CO2e to the
    # watt-hour and the gram
    text = {c: exact_sql(c) for c, t in types.items() if t.startswith("DECIMAL")}
    text |= {c: f"round({c}, {METERS[meter][1]})" for c, meter in FOCUS_MEASURES.items()}
    text["x_AllocatedShare"] = exact_sql("x_AllocatedShare::decimal(38, 12)")   # plain, never 1e-05
    money = ", ".join(f"{sql} as {c}" for c, sql in text.items())
    base = out.with_suffix("") if out.suffix in (".csv", ".parquet") else out
    # the CSV is neutralised like every CSV (a FinOps lead opens it in a spreadsheet); the Parquet
    # beside it keeps ids, descriptions and tag JSON exactly as billed, for validators and tools
    return _write(con, base, rows, f"select * replace ({money}) from rows", month,
                  f"timestampformat '{FOCUS_TIME_FORMAT}'")


def export_allocation(con: duckdb.DuckDBPyConnection, month: str, out_dir: Path) -> list[Path]:
    """Write <out_dir>/allocation-<month>.parquet and .csv from the allocation_day_reporting mart:
    every line of the month's allocation (team, day, resource, namespace, workload, rule, meter,
    amount, unit, money also in the reporting currency, source file sha256 and row), summing per
    team and meter to team_month (amount) and team_month_reporting (amount_reporting)."""
    _needs_rows(con, "allocation_day_reporting", month, "allocation")
    rows = (f"select {', '.join(ALLOCATION_COLUMNS)} from allocation_day_reporting where month = ? "
            "order by team, meter, day, resource_id, namespace, workload, rule, sharing_mode, split_rule, source_sha256, source_row, source_line, amount")
    # money in its currency's minor unit, the other meters in their allocation quantum
    places = {**minor_units(), **{unit: n for unit, n in METERS.values() if unit != "currency"}}
    csv_rows = (f"select * replace ({amount_sql('amount', places, 'unit')} as amount, "
                f"{amount_sql('amount_reporting', places, 'reporting_currency')} as amount_reporting) from rows")
    return _write(con, out_dir / f"allocation-{month}", rows, csv_rows, month, "dateformat '%Y-%m-%d'")


def copy_out(con: duckdb.DuckDBPyConnection, query: str, params: list, out: Path) -> list[Path]:
    """A query's rows (one `?`, the month) as <out>.parquet and <out>.csv (out without suffix, or
    with either suffix), for exports of a mart as it is: in the CSV, DECIMAL money prints in the
    minor unit of the row's `currency` column when the rows have one, other decimals plain."""
    types = {r[0]: r[1] for r in con.execute(f"describe {query}", params).fetchall()}
    places = minor_units()
    text = {c: amount_sql(c, places, "currency") if "currency" in types else exact_sql(c)
            for c, t in types.items() if t.startswith("DECIMAL")}
    # doubles as the reports show them (no 4395.439999999999), lists as plain text, not a repr
    text |= {c: settled_sql(ident(c)) for c, t in types.items() if t == "DOUBLE"}
    text |= {c: f"array_to_string({ident(c)}, '; ')" for c, t in types.items() if t.endswith("[]")}
    csv_rows = f"select * replace ({', '.join(f'{sql} as {ident(c)}' for c, sql in text.items())}) from rows" if text \
        else "select * from rows"
    base = out.with_suffix("") if out.suffix in (".csv", ".parquet") else out
    return _write(con, base, query, csv_rows, params[0], "")


def _write(con: duckdb.DuckDBPyConnection, base: Path, rows: str, csv_rows: str, month: str, csv_options: str) -> list[Path]:
    """COPY the rows to <base>.parquet as they are and to <base>.csv through csv_rows (a query
    over `rows`) and the one CSV writer (core/csv_out.py: formula-leading text neutralised),
    streaming: nothing of the month passes through Python. The two are one set (core.atomic):
    a reader sees both of the earlier export or both of this one, never a new Parquet beside
    the CSV of another warehouse state."""
    parquet, csv = base.with_suffix(".parquet"), base.with_suffix(".csv")
    with replacing_set(base.parent, base.name, (parquet.name, csv.name)) as stage:
        copy_parquet(con, rows, [month], stage / parquet.name)
        copy_csv(con, rows, [month], stage / csv.name, csv_options, then=csv_rows)
    return [parquet, csv]


def _needs_rows(con: duckdb.DuckDBPyConnection, mart: str, month: str, what: str) -> None:
    n = one_row(con, f"select count(*) from {mart} where month = ?", [month])[0]
    if n == 0:
        raise InputError(f"--month {month}", f"no {what} for this month", f"{mart} is empty for it",
                         "Ingest that month's billing exports first")


def _types(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in con.execute(f"describe {table}").fetchall()}
