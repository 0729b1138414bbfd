"""A model as Spark runs it: its CTE chain as separate queries (steps), each turned into Spark SQL
once the views it reads exist, so that what depends on the inputs' columns can be asked of
Spark's analyser: UNION BY NAME over `*` and `* REPLACE` (DuckDB expands them from the inputs'
columns; Spark SQL has neither).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Mapping

from sqlglot import exp

from pipelines.spark.dialect import DIALECT, UnportableSQL, bottom_up, spark_tree

# What a query's columns are, asked of the engine: `columns(spark_sql)` -> names in order (on Spark,
# the analysed plan's; nothing runs). Constructs whose meaning depends on the inputs' columns
# (UNION BY NAME over `*`, `* REPLACE`) are resolved with it, step by step, once their inputs exist.
Columns = Callable[[str], list[str]]


def _named(select: exp.Expr) -> list[str] | None:
    """A SELECT's output names when it states them all (no star), else None."""
    if not isinstance(select, exp.Select):
        return None
    names = [p.alias_or_name for p in select.expressions]
    return None if any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and p.is_star) for p in select.expressions) \
        or "*" in names else names


def _union_by_name(union: exp.Union, columns: Columns | None) -> exp.Expression:
    """UNION ALL BY NAME (Spark 4.3 has no BY NAME in SQL) as UNION ALL, each side's columns
    put in the result's order: the left side's, then those only the right side has; a side
    lacking a column gives null there, as DuckDB does. Sides that name every column are
    reordered as they stand; others are asked of the engine (`columns`)."""
    left, right = union.left, union.right
    left_names, right_names = _named(left), _named(right)
    if left_names is not None and right_names is not None and set(left_names) == set(right_names):
        by_name = {p.alias_or_name: p for p in right.expressions}
        right.set("expressions", [by_name[n] for n in left_names])
        union.set("by_name", None)
        return union
    if columns is None:
        raise UnportableSQL("UNION BY NAME over `*` or different columns needs the engine's column names")
    left_names = columns(left.sql(dialect=DIALECT))
    right_names = columns(right.sql(dialect=DIALECT))
    for names in (left_names, right_names):
        if len(set(names)) != len(names):
            raise UnportableSQL(f"UNION BY NAME over a side with repeated column names: {names}")
    names = left_names + [n for n in right_names if n not in left_names]

    def side(query: exp.Expr, have: list[str], alias: str) -> exp.Select:
        cols = [exp.column(n, table=alias, quoted=True) if n in have else exp.alias_(exp.Null(), n, quoted=True)
                for n in names]
        return exp.select(*cols).from_(exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(alias))))

    return exp.Union(this=side(left, left_names, "_l"), expression=side(right, right_names, "_r"),
                     distinct=union.args.get("distinct"))


def _star_replace(select: exp.Select, columns: Columns | None) -> exp.Select:
    """`* REPLACE (expr AS c)` (DuckDB) as the star's columns spelled out, c by the expression."""
    for i, proj in enumerate(select.expressions):
        star = proj if isinstance(proj, exp.Star) else proj.this if isinstance(proj, exp.Column) and proj.is_star else None
        if star is None or not star.args.get("replace"):
            continue
        if columns is None:
            raise UnportableSQL("`* REPLACE` needs the engine's column names")
        replaced = {r.alias: r.this for r in star.args["replace"]}
        bare = proj.copy()
        (bare if isinstance(bare, exp.Star) else bare.this).set("replace", None)
        probe = select.copy()
        for arg in ("where", "group", "having", "qualify", "order", "limit", "offset", "distinct", "windows"):
            probe.set(arg, None)
        probe.set("expressions", [bare])
        names = columns(probe.sql(dialect=DIALECT))
        if len(set(names)) != len(names):
            raise UnportableSQL(f"`* REPLACE` over repeated column names: {names}")
        table = proj.table if isinstance(proj, exp.Column) else None
        spelled = [exp.alias_(replaced[n].copy(), n, quoted=True) if n in replaced else exp.column(n, table=table, quoted=True)
                   for n in names]
        select.set("expressions", select.expressions[:i] + spelled + select.expressions[i + 1:])
        return select
    return select


def resolve(tree: exp.Expression, columns: Columns | None) -> exp.Expression:
    """The constructs that need the inputs' column names, innermost first (a side of a union is
    resolved before the union asks for its columns)."""
    def one(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Select):
            return _star_replace(node, columns)
        if isinstance(node, exp.Union) and node.args.get("by_name"):
            return _union_by_name(node, columns)
        return node
    return bottom_up(tree, one)


def to_spark(sql: str, variables: Mapping[str, Any] | None = None, columns: Columns | None = None) -> str:
    """One DuckDB query as Spark SQL text (`columns`: see Columns; needed where it unions `*` by
    name or replaces in a star, and its inputs must exist then)."""
    return resolve(spark_tree(sql, variables), columns).sql(dialect=DIALECT, copy=False)


def cte_steps(sql: str, variables: Mapping[str, Any] | None, prefix: str) -> list[tuple[str, exp.Expression, int]]:
    """A model's CTE chain as separate Spark queries: (view name, query tree, later references),
    each CTE as view `<prefix>_<name>`, the final SELECT last (named `prefix`). Each tree becomes
    text with step_sql (which uses it up) once the views before it exist.

    Spark inlines every deterministic CTE wherever it is referenced; a chain whose CTEs are used
    several times (int_alloc_targets: `groups` and `basis` under many others) grows into a plan
    Catalyst takes minutes to optimise. Run as steps, a CTE used more than once can be
    materialised once (pipelines.spark.build)."""
    tree = spark_tree(sql, variables)
    key = "with_" if "with_" in tree.arg_types else "with"
    with_ = tree.args.get(key)
    ctes = list(with_.expressions) if with_ else []
    tree.set(key, None)
    parts = [(c.alias, c.this) for c in ctes] + [(None, tree)]
    names: dict[str, str] = {}
    out: list[list[Any]] = []
    for name, body in parts:
        # the tree is spark_tree's own copy: renamed in place
        for node in list(body.find_all(exp.Table)):
            if not node.args.get("db") and node.name in names:
                # renamed keeping what hangs off the table (an UNPIVOT, say); the old name stays
                # as the alias the model's columns are qualified with
                if not node.alias:
                    node.set("alias", exp.TableAlias(this=exp.to_identifier(node.name)))
                node.set("this", exp.to_identifier(names[node.name]))
        view = f"{prefix}_{name}" if name else prefix
        out.append([view, body, Counter(t.name for t in body.find_all(exp.Table))])
        if name:
            names[name] = view
    return [(view, body, sum(later[view] for _, _, later in out[i + 1:])) for i, (view, body, _) in enumerate(out)]


def step_sql(tree: exp.Expression, columns: Columns | None = None) -> str:
    """One step of cte_steps as Spark SQL, its column-dependent constructs resolved (resolve).
    The tree is used up: resolved and generated in place (a step is written once, and a copy of
    every step's tree cost 0.35-0.96 CPU-s a build, garbage collection included)."""
    return resolve(tree, columns).sql(dialect=DIALECT, copy=False)
