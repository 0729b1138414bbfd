"""The models the build step runs, and their order, derived from what each model reads (as dbt
derives its graph from `ref()`): a new model needs no list entry, and a cycle or a read of a table
that nothing builds fails before anything is written."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping

import sqlglot
from sqlglot import exp

from core.sql import read_sql, sql_files

MODEL_FOLDERS = ("20_intermediate", "30_marts")
PYTHON = "python"     # a model computed in Python (a fit that needs scipy), written back as a table


@dataclass(frozen=True)
class Model:
    name: str
    folder: str
    reads: frozenset[str]


class ModelGraphError(ValueError):
    """The models cannot be ordered: a cycle, or a read that no model or table provides."""


@lru_cache(maxsize=256)
def parsed(sql: str) -> exp.Expr:
    """A query in DuckDB's dialect parsed once per process, shared: never change the tree (copy
    it). The graph reads every model's tables from it (sql_models, at import), and the Spark
    engine transpiles the same tree (pipelines.spark.dialect) instead of parsing the model again
    (all but the 4 whose UNPIVOT statement it rewrites first): 0.4-0.6 CPU-s a build."""
    return sqlglot.parse_one(sql, read="duckdb")


def sql_reads(sql: str) -> frozenset[str]:
    """Tables a query reads: every table it names, less its own CTEs (which shadow tables)."""
    tree = parsed(sql)
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    return frozenset(t.name for t in tree.find_all(exp.Table) if t.name not in ctes)


@lru_cache(maxsize=None)
def sql_models() -> tuple[Model, ...]:
    return tuple(Model(f.removesuffix(".sql"), folder, sql_reads(read_sql(folder, f)))
                 for folder in MODEL_FOLDERS for f in sql_files(folder))


def build_order(models: Iterable[Model]) -> list[Model]:
    """Every model after the models it reads; among models ready together, intermediate before
    marts and then by name, so the order is the same on every run."""
    by_name = {m.name: m for m in models}
    waiting = {m.name: {r for r in m.reads if r in by_name and r != m.name} for m in by_name.values()}
    selfish = sorted(m.name for m in by_name.values() if m.name in m.reads)
    if selfish:
        raise ModelGraphError(f"model {selfish[0]} reads itself")
    order: list[Model] = []
    while waiting:
        ready = sorted((by_name[n] for n, deps in waiting.items() if not deps), key=lambda m: (m.folder, m.name))
        if not ready:
            raise ModelGraphError("models read each other in a cycle: " + " -> ".join(_cycle(waiting)))
        for m in ready:
            order.append(m)
            del waiting[m.name]
        for deps in waiting.values():
            deps.difference_update(m.name for m in ready)
    return order


def _cycle(waiting: Mapping[str, set[str]]) -> list[str]:
    """One cycle among the models left waiting (each waits on another waiting one)."""
    path = [min(waiting)]
    while path.count(path[-1]) < 2:
        path.append(min(waiting[path[-1]]))
    return path[path.index(path[-1]):]


def unprovided_reads(models: Iterable[Model], tables: Iterable[str]) -> list[tuple[str, str]]:
    """(model, table) for every read that neither a model nor an existing table provides."""
    models = list(models)
    provided = {m.name for m in models} | {t.lower() for t in tables}
    return sorted((m.name, r) for m in models for r in m.reads if r.lower() not in provided)
