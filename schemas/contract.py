"""Pandera models as the single statement of each table's contract, run two ways.

On small tables (hourly rollups, marts) the model validates a pandas frame lazily, as usual.
On file-sized inputs it cannot (pandas needs the whole frame in memory), so `sql_checks`
compiles the same model's column checks into DuckDB predicates that run over the staged rows
in one pass; tests assert both ways reject the same rows. Line-level marts, which grow with the
bill, are checked the second way too: their frame-wide rules are stated once, in SQL
(`frame_rule`), which pandera runs over a frame through DuckDB and the SQL validation over the
table itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.sql import literal

# pandera (and pandas) take a second to import: readers import a model when they stage a file
# that needs its contract, and telemetry files never do
if TYPE_CHECKING:
    import pandas as pd
    import pandera.pandas as pa


@dataclass(frozen=True)
class SqlCheck:
    column: str
    check: str          # as the rejects table names it, e.g. 'greater_than_or_equal_to(0)'
    failing_sql: str    # a predicate true for a failing row
    label: str = ""     # as pandera's failure cases name it, e.g. "str_matches('^[A-Z]{3}$')"


def _predicate(col: str, check: pa.Check) -> str | None:
    s = check.statistics or {}
    q = f'"{col}"'
    match check.name:
        case "greater_than_or_equal_to":
            return f"{q} < {literal(s['min_value'])}"
        case "greater_than":
            return f"{q} <= {literal(s['min_value'])}"
        case "less_than_or_equal_to":
            return f"{q} > {literal(s['max_value'])}"
        case "less_than":
            return f"{q} >= {literal(s['max_value'])}"
        case "in_range":
            return f"not ({q} between {literal(s['min_value'])} and {literal(s['max_value'])})"
        case "not_equal_to":
            return f"{q} = {literal(s['value'])}"
        case "isin":
            return f"{q} not in ({', '.join(literal(v) for v in s['allowed_values'])})"
        case "str_matches":
            return f"not regexp_full_match({q}, {literal(s['pattern'])})"
    return None


def sql_checks(model: type[pa.DataFrameModel], columns: set[str] | None = None) -> list[SqlCheck]:
    """The model's column checks as SQL; `columns` limits them to those a stage produces."""
    out: list[SqlCheck] = []
    for name, col in model.to_schema().columns.items():
        if columns is not None and name not in columns:
            continue
        if not col.nullable:
            out.append(SqlCheck(name, "not_nullable", f'"{name}" is null', "not_nullable"))
        for chk in col.checks:
            pred = _predicate(name, chk)
            if pred is None:
                raise ValueError(f"{model.__name__}.{name}: check {chk.name} has no SQL form; add it to _predicate")
            stats = ", ".join(f"{v}" for v in (chk.statistics or {}).values())
            out.append(SqlCheck(name, f"{chk.name}({stats})", f'"{name}" is not null and ({pred})', chk.error or chk.name))
    return out


def failing_sql(model: type[pa.DataFrameModel], columns: set[str]) -> str | None:
    """A predicate true for a row that fails any check of the model on `columns` (None: no check
    applies). Plain comparisons, cheap on every row; `failures_sql` says which, for those rows."""
    checks = sql_checks(model, columns)
    return " or ".join(f"({c.failing_sql})" for c in checks) if checks else None


def failures_sql(model: type[pa.DataFrameModel], columns: set[str]) -> str | None:
    """An SQL expression for one row: the list of its failed checks, each a struct with the
    _rejects fields (column_name, check_name, value, message); [] when it passes. None when no
    check applies to `columns`. Building the list costs more than the comparisons: evaluate it
    only where `failing_sql` holds."""
    checks = sql_checks(model, columns)
    if not checks:
        return None
    items = ", ".join(
        f"case when {c.failing_sql} then {{'column_name': {literal(c.column)}, 'check_name': {literal(c.check)}, "
        f"'value': cast(\"{c.column}\" as varchar), 'message': {literal('fails ' + c.check)}}} end"
        for c in checks)
    return f"list_filter([{items}], lambda f: f is not null)"


def reject_sql(model: type[pa.DataFrameModel], columns: set[str], relation: str = "_staged") -> str:
    """One INSERT ... SELECT that writes every failing (row, check) of `relation` into _rejects,
    in one pass over it (a UNION ALL of a SELECT per check read the rows once per check)."""
    failures, failing = failures_sql(model, columns), failing_sql(model, columns)
    if failures is None:
        return ""
    return ("insert into _rejects select row_number, f.column_name, f.check_name, f.value, f.message "
            f"from (select row_number, unnest({failures}) as f from {relation} where {failing})")


@dataclass(frozen=True)
class FrameRule:
    name: str
    columns: list[str]
    passes_sql: str     # true for a row that meets the rule (windows allowed)


def frame_rules(model: type[pa.DataFrameModel]) -> list[FrameRule]:
    """The model's frame-wide checks stated in SQL (`passes=` on the decorator). A frame check
    without one cannot run in SQL: say which."""
    out = []
    for chk in model.to_schema().checks:
        stats = chk.statistics or {}
        if "passes" not in stats:
            raise ValueError(f"{model.__name__}: frame check {chk.name} has no SQL form; state it as passes=...")
        out.append(FrameRule(chk.name, list(stats.get("columns") or []), stats["passes"]))
    return out


def passing_rows(df: pd.DataFrame, passes: str) -> pd.Series:
    """A frame rule's SQL over a pandas frame, by DuckDB: true where a row meets it. A null
    result passes (a null in a checked column is the nullability check's business, as pandera
    leaves it)."""
    import duckdb
    import numpy as np
    import pandas as pd

    with duckdb.connect() as con:
        con.register("frame", df.assign(_frame_pos=np.arange(len(df))))
        ok = con.execute(f"select coalesce(({passes}), true) from frame order by _frame_pos").fetchnumpy()
    return pd.Series(next(iter(ok.values())), index=df.index, dtype=bool)
