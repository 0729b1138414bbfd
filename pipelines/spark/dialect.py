"""DuckDB SQL -> Spark SQL, at run time: the models under pipelines/sql are written once, for
DuckDB, and sqlglot transpiles each one for Spark when it runs there. No second copy is kept.

sqlglot translates most of the dialect (GROUP BY ALL, FILTER (WHERE), arg_min -> min_by, struct
and list literals, lambdas, 1-based list indexes, null ordering). This module is the shim for the
rest, on the parsed tree before Spark SQL is generated, each rewrite tested in
tests/test_spark_dialect.py:

- DuckDB macros (macros.sql and the unit macros of pipelines.warehouse) are expanded inline;
- getvariable('name') becomes the value as a literal, rendered by sqlglot (never pasted text);
- constructs Spark lacks or reads differently: UNPIVOT statements, hugeint, epoch(),
  make_timestamp(), to_hours(), strftime/strptime patterns, list(), any_value() and string_agg()
  with ORDER BY, list_distinct (DuckDB drops nulls), list_sum, any_value (DuckDB skips nulls), len() of a
  list, GLOB, regexp_full_match, isinf, try_strptime with a list of formats, `\\1` in
  regexp_replace, printf of DECIMALs, `/` (a DOUBLE division in DuckDB), date_trunc's result
  type, unnest in a join, text slices s[a:b], json_valid, QUALIFY (kept, as Spark 4.3 reads it);
- `case when X is not null then X else F end` (utc_ts) as coalesce(X, F): X computed once.

What depends on the inputs' columns (UNION BY NAME over `*`, `* REPLACE`) is resolved in
pipelines.spark.steps, once those inputs exist.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

import sqlglot
from sqlglot import exp, transforms
from sqlglot.dialects.spark import Spark
from sqlglot.generators.spark import SparkGenerator

from core.sql import read_sql
from core.units import US_PER_S
from pipelines.models import parsed
from pipelines.warehouse import PY_MACROS


class Spark43(Spark):
    """Spark SQL as Spark 4.3 reads it: QUALIFY is kept (sqlglot rewrites it into a subquery whose
    `select *` leaks the window column `_w` into a model's output)."""

    class Generator(SparkGenerator):
        TRANSFORMS = {**SparkGenerator.TRANSFORMS,
                      exp.Select: transforms.preprocess([transforms.eliminate_distinct_on, transforms.unnest_to_explode,
                                                         transforms.any_to_exists])}


DIALECT = Spark43
MACRO = re.compile(r"create\s+or\s+replace\s+temp\s+macro\s+(\w+)\s*\(([^)]*)\)\s+as\s+(.*)", re.IGNORECASE | re.DOTALL)


class UnportableSQL(ValueError):
    """A construct the shim has no faithful Spark form for (say which model, and why)."""


@dataclass(frozen=True)
class Macro:
    params: tuple[str, ...]
    body: exp.Expr


@lru_cache(maxsize=1)
def macros() -> dict[str, Macro]:
    """Every DuckDB macro the models call, parsed once: macros.sql and the Python-defined ones."""
    text = "\n".join(ln for ln in read_sql("00_warehouse", "macros.sql").splitlines() if not ln.lstrip().startswith("--"))
    defs = [(name, params, body) for name, params, body in PY_MACROS]
    # statements end a line with `;` (a message text may hold one mid-line)
    for stmt in re.split(r";[ \t]*$", text, flags=re.MULTILINE):
        if m := MACRO.match(stmt.strip()):
            defs.append((m.group(1), m.group(2), m.group(3)))
    out = {}
    for name, params, body in defs:
        names = tuple(p.strip() for p in params.split(",") if p.strip())
        out[name.lower()] = Macro(names, sqlglot.parse_one(body, read="duckdb"))
    return out


def literal(value: Any) -> exp.Expr:
    """A Python value as a SQL literal node: the one way config values reach Spark SQL text.
    sqlglot renders and escapes it; lists become arrays (typed as strings when empty)."""
    if isinstance(value, (list, tuple)):
        if not value:
            return exp.cast(exp.Array(expressions=[]), exp.DataType.build("array<string>", dialect=DIALECT))
        return exp.Array(expressions=[literal(v) for v in value])
    return exp.convert(value)


def _expand(node: exp.Expression, variables: Mapping[str, Any]) -> exp.Expr:
    """Macros and variables, innermost first (a macro's body may call another macro)."""
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        if name == "getvariable":
            key = node.expressions[0].name
            if key not in variables:
                raise UnportableSQL(f"getvariable({key!r}) has no value: pass it in `variables`")
            return literal(variables[key])
        macro = macros().get(name)
        if macro is not None:
            if len(macro.params) != len(node.expressions):
                raise UnportableSQL(f"macro {name} takes {len(macro.params)} arguments, got {len(node.expressions)}")
            args = dict(zip(macro.params, node.expressions))
            # transformed in place (copy=False): the body is this call's own copy
            body = macro.body.copy().transform(
                lambda n: args[n.name].copy() if isinstance(n, exp.Column) and not n.table and n.name in args else n, copy=False)
            return exp.Paren(this=body.transform(lambda n: _expand(n, variables), copy=False))
    return node


def _anon(name: str, *args: exp.Expr | None) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _cast(e: exp.Expression, to: str) -> exp.Cast:
    return exp.Cast(this=e, to=exp.DataType.build(to, dialect=DIALECT))


def _as_double(e: exp.Expression) -> exp.Expression:
    if isinstance(e, exp.Literal) or (isinstance(e, exp.Cast) and e.to.is_type(exp.DataType.Type.DOUBLE)):
        return e
    return _cast(e, "double")


# expressions whose value is a list whatever their inputs
LIST_MAKERS = (exp.ArrayFilter, exp.Array, exp.ArrayAgg, exp.Transform, exp.ArrayConcat, exp.ArrayDistinct, exp.ArraySort,
               exp.Split, exp.RegexpExtractAll)

TIME_TYPES = {exp.DataType.Type.TIMESTAMPNTZ, exp.DataType.Type.TIMESTAMPLTZ, exp.DataType.Type.TIMESTAMP,
              exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.DATE}
STRFTIME = {"%Y": "yyyy", "%m": "MM", "%d": "dd", "%H": "HH", "%M": "mm", "%S": "ss", "%f": "SSSSSS", "%g": "SSS",
            "%y": "yy", "%j": "DDD"}


def java_time_format(fmt: str) -> str:
    """A DuckDB strftime/strptime format as a Java DateTimeFormatter pattern; literal text is
    quoted (sqlglot leaves the T and Z of ISO 8601 bare, which Java reads as pattern letters)."""
    out: list[str] = []
    literal_run: list[str] = []

    def flush() -> None:
        if literal_run:
            text = "".join(literal_run)
            out.append(f"'{text}'" if re.search(r"[A-Za-z']", text) else text)
            literal_run.clear()

    for token in re.findall(r"%.|[^%]", fmt):
        if token.startswith("%") and len(token) == 2:
            if token not in STRFTIME:
                raise UnportableSQL(f"strftime specifier {token} has no Spark pattern (add it to STRFTIME)")
            flush()
            out.append(STRFTIME[token])
        else:
            literal_run.append(token)
    flush()
    return "".join(out)


def _format(node: exp.Expression) -> exp.Literal:
    fmt = node.args.get("format")
    if not isinstance(fmt, exp.Literal):
        raise UnportableSQL("a strftime/strptime format must be a literal")
    return exp.Literal.string(java_time_format(fmt.this))


def _regexp_replace(node: exp.RegexpReplace) -> exp.Expression:
    pattern, replacement = node.expression, node.args.get("replacement")
    modifiers = node.args.get("modifiers")
    global_ = isinstance(modifiers, exp.Literal) and "g" in modifiers.this
    # Spark replaces every match; DuckDB without 'g' only the first: the same only when the
    # pattern can match once (anchored at the start or end).
    if not global_ and not (isinstance(pattern, exp.Literal) and (pattern.this.startswith("^") or pattern.this.endswith("$"))):
        raise UnportableSQL(f"regexp_replace without 'g' on an unanchored pattern: {pattern.sql('duckdb')}")
    if isinstance(replacement, exp.Literal):
        replacement = exp.Literal.string(re.sub(r"\\(\d)", r"$\1", replacement.this))
    return _anon("regexp_replace", node.this, pattern, replacement)


def _ordered_list(node: exp.Expression) -> exp.Expression:
    """list(x order by k1 [desc], ...): collect (k1, ..., x) structs, sort them by the keys as
    DuckDB orders them (nulls last unless told), keep x. Spark's collect_list keeps no order."""
    order: exp.Order = node.this
    keys = order.expressions
    pairs = exp.Struct(expressions=[exp.alias_(k.this.copy(), f"k{i}") for i, k in enumerate(keys)]
                       + [exp.alias_(order.this.copy(), "v")])
    l, r = exp.to_identifier("l"), exp.to_identifier("r")
    cmp: exp.Expression = exp.Literal.number(0)
    for i, k in reversed(list(enumerate(keys))):
        a, b = exp.column(f"k{i}", table="l"), exp.column(f"k{i}", table="r")
        before = exp.Literal.number(1 if k.args.get("desc") else -1)
        after = exp.Literal.number(-1 if k.args.get("desc") else 1)
        null_first = bool(k.args.get("nulls_first"))
        cmp = exp.Case(ifs=[
            exp.If(this=exp.and_(exp.Is(this=a.copy(), expression=exp.Null()), exp.Is(this=b.copy(), expression=exp.Null())), true=cmp),
            exp.If(this=exp.Is(this=a.copy(), expression=exp.Null()), true=exp.Literal.number(-1 if null_first else 1)),
            exp.If(this=exp.Is(this=b.copy(), expression=exp.Null()), true=exp.Literal.number(1 if null_first else -1)),
            exp.If(this=exp.LT(this=a.copy(), expression=b.copy()), true=before),
            exp.If(this=exp.GT(this=a.copy(), expression=b.copy()), true=after)], default=cmp)
    sorted_ = _anon("array_sort", _anon("collect_list", pairs), exp.Lambda(this=cmp, expressions=[l, r]))
    return _anon("transform", sorted_, exp.Lambda(this=exp.column("v", table="e"), expressions=[exp.to_identifier("e")]))


def _lateral_explode(join: exp.Join) -> exp.Join:
    """`join unnest(list) as t(x)` as `join lateral explode(list) as t(x)`: sqlglot writes it as a
    LATERAL VIEW after every join, where a later join's condition on t.x cannot see it."""
    unnest: exp.Unnest = join.this
    if len(unnest.expressions) != 1 or unnest.args.get("offset"):
        raise UnportableSQL(f"unnest of several lists or with an offset in a join: {unnest.sql('duckdb')}")
    alias = unnest.args.get("alias")
    join.set("this", exp.Lateral(this=_anon("explode", unnest.expressions[0]), alias=alias.copy() if alias else None))
    return join


def _string_agg(node: exp.GroupConcat) -> exp.Expression:
    """string_agg(x, sep order by ...) and string_agg(distinct x, sep order by x) as the joined
    list (Spark's LISTAGG ... WITHIN GROUP fails to plan beside another DISTINCT aggregate);
    null, as DuckDB's, when there is nothing to join."""
    inner, sep = node.this, node.args.get("separator") or exp.Literal.string(",")
    if not isinstance(inner, exp.Order):
        return node
    keys, value = inner.expressions, inner.this
    if isinstance(value, exp.Distinct):
        value = value.expressions[0]
        if any(k.this != value for k in keys) or len(keys) != 1:
            raise UnportableSQL("string_agg(distinct x order by y): only ordered by x itself")
        values: exp.Expression = _anon("array_sort", _anon("array_distinct", _anon("collect_list", value.copy())))
        if keys[0].args.get("desc"):
            values = _anon("reverse", values)
    else:
        values = _not_null(_ordered_list(exp.ArrayAgg(this=inner)))
    return exp.Case(ifs=[exp.If(this=exp.GT(this=_anon("size", values), expression=exp.Literal.number(0)),
                                true=_anon("array_join", values.copy(), sep))])


PRINTF_SPEC = re.compile(r"%%|%[-+ 0#]*\d*(?:\.\d+)?([a-zA-Z])")


def _printf(node: exp.Anonymous) -> exp.Expression:
    """printf(fmt, ...): Java's formatter takes %f only of a float and %d only of an integer, and
    Spark hands it DECIMALs as they are; each argument is cast to what its specifier prints."""
    fmt, *args = node.expressions
    if not isinstance(fmt, exp.Literal):
        raise UnportableSQL("printf with a format that is not a literal")
    convs = [m.group(1) for m in PRINTF_SPEC.finditer(fmt.this) if m.group(0) != "%%"]
    if len(convs) != len(args):
        raise UnportableSQL(f"printf format {fmt.this!r} takes {len(convs)} arguments, got {len(args)}")
    to = {"f": "double", "e": "double", "g": "double", "d": "bigint", "i": "bigint"}
    cast = [_cast(a, to[c.lower()]) if c.lower() in to else a for a, c in zip(args, convs)]
    return _anon("printf", fmt, *cast)


def _glob(node: exp.Glob) -> exp.Expression:
    """x GLOB p (no GLOB in Spark) as a full regular-expression match of p translated: regex
    metacharacters escaped, * -> .*, ? -> ., [!...] -> [^...]; a null either side stays null."""
    pattern = _anon("regexp_replace", node.expression, exp.Literal.string(r"([.+^$(){}|\\])"), exp.Literal.string(r"\\$1"))
    for glob, regex in ((r"\*", ".*"), (r"\?", "."), (r"\[!", "[^")):
        pattern = _anon("regexp_replace", pattern, exp.Literal.string(glob), exp.Literal.string(regex))
    anchored = _anon("concat", exp.Literal.string("^(?s)"), pattern, exp.Literal.string("$"))
    return exp.RegexpLike(this=node.this, expression=anchored)


def _not_null(array: exp.Expression) -> exp.Expression:
    e = exp.to_identifier("e")
    return _anon("filter", array, exp.Lambda(this=exp.Not(this=exp.Is(this=exp.column("e"), expression=exp.Null())),
                                             expressions=[e]))


def _drops_nulls(fn: exp.Expression) -> bool:
    """A lambda `e -> e is not null`."""
    if not (isinstance(fn, exp.Lambda) and len(fn.expressions) == 1 and isinstance(fn.this, exp.Not)):
        return False
    test = fn.this.this
    return (isinstance(test, exp.Is) and isinstance(test.expression, exp.Null)
            and test.this.name == fn.expressions[0].name and not test.this.args.get("table"))


def _non_null_items(node: exp.ArrayFilter) -> exp.Expression:
    """list_filter([a, b, ...], e -> e is not null) (the staging models' lists of located
    failures, nearly always empty) filtered only where an item has a value, an empty list
    elsewhere. Spark runs a lambda interpreted, its arguments too (a higher-order function has
    no generated code): every row's checks then ran interpreted, a third of a CUR line's
    staging; the guard's tests are generated code, and the lambda runs on failing rows alone."""
    items = node.this.expressions
    some = exp.or_(*[exp.Not(this=exp.Is(this=item.copy(), expression=exp.Null())) for item in items])
    return exp.Case(ifs=[exp.If(this=some, true=node.copy())], default=exp.Array(expressions=[]))


def _makes_list(node: exp.Expression) -> bool:
    """A list by its making (a list function, or the guarded filter of _non_null_items), in
    parentheses too (a macro's body is)."""
    inner = node.unnest()
    if isinstance(inner, exp.Case):
        ifs = inner.args.get("ifs") or []
        return len(ifs) == 1 and isinstance(ifs[0].args.get("true"), exp.ArrayFilter)
    return isinstance(inner, LIST_MAKERS)


def _list_sum(node: exp.Anonymous) -> exp.Expression:
    """DuckDB's list_sum: the values left to right (osum sorts them first, and the same order
    gives the same double), nulls skipped, null for a list with no values; as a DOUBLE."""
    acc, e = exp.to_identifier("acc"), exp.to_identifier("e")
    step = exp.Add(this=exp.Coalesce(this=exp.column("acc"), expressions=[_cast(exp.Literal.number(0), "double")]),
                   expression=exp.column("e"))
    return _anon("aggregate", _not_null(node.expressions[0]), _cast(exp.Null(), "double"),
                 exp.Lambda(this=step, expressions=[acc, e]))


def _try_strptime(node: exp.Anonymous) -> exp.Expression:
    value, formats = node.expressions
    fmts = formats.expressions if isinstance(formats, exp.Array) else [formats]
    return exp.Coalesce(this=_anon("try_to_timestamp", value.copy(), exp.Literal.string(java_time_format(fmts[0].this))),
                        expressions=[_anon("try_to_timestamp", value.copy(), exp.Literal.string(java_time_format(f.this)))
                                     for f in fmts[1:]])


def _int_literal(node: exp.Expression | None) -> int | None:
    if node is None:
        return None
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -int(node.this.this)
    if isinstance(node, exp.Literal) and not node.is_string:
        return int(node.this)
    raise UnportableSQL(f"a slice bound must be an integer literal: {node.sql('duckdb')}")


def _text_slice(node: exp.Bracket) -> exp.Expression:
    """text[a:b] (1-based, both ends included, a negative end counted from the last character)
    as substring(); on the Spark path only text is sliced (a list would fail Spark's analysis,
    not pass silently)."""
    slice_: exp.Slice = node.expressions[0]
    start, end = _int_literal(slice_.this) or 1, _int_literal(slice_.expression)
    if start < 1:
        raise UnportableSQL("a slice from a negative start has no shim")
    if end is None:
        return _anon("substring", node.this, exp.Literal.number(start))
    length: exp.Expression = exp.Literal.number(end - start + 1) if end >= 0 else \
        exp.Add(this=exp.Length(this=node.this.copy()), expression=exp.Literal.number(end - start + 2))
    return _anon("substring", node.this, exp.Literal.number(start), length)


# Functions whose value differs between two calls: an expression holding one is not computed once
# in place of twice
NONDETERMINISTIC = (exp.Rand, exp.Randn, exp.Uuid)


def _value_or_else(node: exp.Case) -> exp.Expression | None:
    """`case when X is not null then X else F end` as coalesce(X, F), the same value by definition
    (X deterministic): Spark's common-subexpression elimination does not share X between a
    CASE's condition and its branch, so the CASE computes X twice wherever it has a value. (The
    utc_ts macro is this CASE: on DuckDB, coalesce() computed its fallback on every row.)"""
    ifs = node.args.get("ifs") or []
    if node.this is not None or len(ifs) != 1:
        return None
    cond, value = ifs[0].this, ifs[0].args.get("true")
    if not (isinstance(cond, exp.Not) and isinstance(cond.this, exp.Is) and isinstance(cond.this.expression, exp.Null)):
        return None
    if cond.this.this != value or value.find(*NONDETERMINISTIC):
        return None
    fallback = node.args.get("default")
    return value if fallback is None else exp.Coalesce(this=value, expressions=[fallback])


def _rewrite(node: exp.Expression) -> exp.Expression:
    """One node, DuckDB meaning -> the Spark expression with the same meaning."""
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1 and isinstance(node.expressions[0], exp.Slice):
        return _text_slice(node)
    if isinstance(node, exp.DataType):
        kind = node.this
        if kind == exp.DataType.Type.TIMESTAMP:
            return exp.DataType.build("timestamp_ntz", dialect=DIALECT)
        if kind == exp.DataType.Type.TIMESTAMPTZ:
            return exp.DataType.build("timestamp_ltz", dialect=DIALECT)
        if kind in (exp.DataType.Type.INT128, exp.DataType.Type.UINT128):
            # no 128-bit integer on Spark: DECIMAL(38, 0) holds the same whole numbers
            return exp.DataType.build("decimal(38, 0)", dialect=DIALECT)
        if kind == exp.DataType.Type.JSON:
            return exp.DataType.build("string", dialect=DIALECT)
        return node
    if isinstance(node, exp.Div):
        # DuckDB's `/` is a DOUBLE division whatever the operands (DECIMAL too); Spark divides two
        # DECIMAL(38, 12) into a DECIMAL rounded to 6 places, a cent off once it is multiplied back
        return exp.Div(this=_as_double(node.this), expression=_as_double(node.expression))
    if isinstance(node, exp.Pow):
        # DuckDB's ** on integers is exact; Spark's power() is a double, exact for 10^0..10^15
        return _cast(_anon("power", node.this, node.expression), "double")
    if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.Anonymous) and node.this.name in ("any_value", "element_at"):
        return node.this   # already any_value(x, true) or the first non-null in order, rewritten below it
    if isinstance(node, exp.AnyValue) and isinstance(node.this, exp.Order):
        # any_value(x order by k): DuckDB's first non-null x in that order
        return _anon("element_at", _not_null(_ordered_list(node)), exp.Literal.number(1))
    if isinstance(node, exp.Join) and isinstance(node.this, exp.Unnest):
        return _lateral_explode(node)
    if isinstance(node, exp.Glob):
        return _glob(node)
    if isinstance(node, exp.GroupConcat) and isinstance(node.this, exp.Order):
        if isinstance(node.parent, exp.Filter):
            raise UnportableSQL("string_agg(... order by ...) filter (where ...) has no shim")
        return _string_agg(node)
    if isinstance(node, exp.Length) and _makes_list(node.this):
        # DuckDB's len() of a list is Spark's size(); Spark's length() is for text only. A list
        # column has no such tell: the models write array_length() for those.
        return _anon("size", node.this)
    if isinstance(node, exp.AnyValue):
        # DuckDB's any_value skips nulls; Spark's takes the first row unless told to skip them
        return _anon("any_value", node.this, exp.true())
    if isinstance(node, exp.ArrayAgg) and isinstance(node.this, exp.Order):
        return _ordered_list(node)
    if isinstance(node, exp.ArrayDistinct):
        # DuckDB's list_distinct drops nulls, Spark's array_distinct keeps one
        return _anon("array_distinct", _not_null(node.this))
    if isinstance(node, exp.TimeToUnix):
        # epoch(ts): seconds with the fraction (Spark's unix_timestamp truncates to whole seconds)
        return exp.Div(this=_anon("unix_micros", _cast(node.this, "timestamp_ltz")), expression=exp.Literal.number(repr(US_PER_S)))
    if isinstance(node, exp.UnixToTime):
        scale = node.args.get("scale")
        fn = {None: "timestamp_seconds", "3": "timestamp_millis", "6": "timestamp_micros"}.get(scale.name if scale else None)
        if fn is None:
            raise UnportableSQL(f"make_timestamp/to_timestamp with scale {scale}")
        return _cast(_anon(fn, node.this), "timestamp_ntz")
    if isinstance(node, exp.TimestampTrunc):
        # Spark's date_trunc returns TIMESTAMP (local time zone) even for TIMESTAMP_NTZ input
        return _cast(_anon("date_trunc", exp.Literal.string(node.text("unit")), node.this), "timestamp_ntz")
    if isinstance(node, exp.TimeToStr):
        return _anon("date_format", node.this, _format(node))
    if isinstance(node, exp.StrToTime):
        return _anon("to_timestamp", node.this, _format(node))
    if isinstance(node, exp.RegexpFullMatch):
        pattern = node.expression
        anchored = (exp.Literal.string(f"^(?:{pattern.this})$") if isinstance(pattern, exp.Literal)
                    else exp.DPipe(this=exp.Literal.string("^(?:"), expression=exp.DPipe(this=pattern, expression=exp.Literal.string(")$"))))
        return exp.RegexpLike(this=node.this, expression=anchored)
    if isinstance(node, exp.IsInf):
        return exp.EQ(this=exp.Abs(this=node.this), expression=_cast(exp.Literal.string("Infinity"), "double"))
    if isinstance(node, exp.RegexpReplace):
        return _regexp_replace(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "printf":
        return _printf(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "to_hours":
        # DuckDB's to_hours(n): an interval of n hours
        return _anon("make_dt_interval", exp.Literal.number(0), node.expressions[0])
    if isinstance(node, exp.ArrayFilter) and isinstance(node.this, exp.Array) and node.this.expressions \
            and _drops_nulls(node.expression):
        return _non_null_items(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "list_sum":
        return _list_sum(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "try_strptime":
        return _try_strptime(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "json_valid":
        # any JSON value parses to a VARIANT (Spark 4); null stays null, as in DuckDB
        value = node.expressions[0]
        return exp.Case(ifs=[exp.If(this=exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())),
                                    true=exp.Not(this=exp.Is(this=_anon("try_parse_json", value.copy()), expression=exp.Null())))])
    if isinstance(node, exp.TryCast) and node.to.this in TIME_TYPES and not isinstance(node.this, exp.Literal):
        # Spark reads 'now', 'today', 'yesterday', 'epoch' as times; DuckDB does not: a time
        # starts with a digit (a sign for years before 0)
        starts = exp.RegexpLike(this=node.this.copy(), expression=exp.Literal.string(r"^\s*[+-]?[0-9]"))
        return exp.Case(ifs=[exp.If(this=starts, true=node.copy())])
    if isinstance(node, exp.Case) and (once := _value_or_else(node)) is not None:
        return once
    if isinstance(node, exp.ParseJSON):
        return node.this
    if isinstance(node, exp.Try):
        # try(expr): non-ANSI Spark already gives null where DuckDB's try catches an error
        return node.this
    return node


def _json_casts(node: exp.Expression) -> exp.Expression:
    """try_cast(json(x) as map(...)), and x::json the same: Spark parses JSON text into a type with from_json (null
    when it does not parse, as DuckDB's try_cast gives). Before the bottom-up pass, which
    unwraps json(x)."""
    if isinstance(node, (exp.Cast, exp.TryCast)) and not node.to.is_type(exp.DataType.Type.JSON):
        inner = node.this
        if isinstance(inner, exp.ParseJSON) or (isinstance(inner, exp.Cast) and inner.to.is_type(exp.DataType.Type.JSON)):
            to = node.to.copy().transform(_rewrite)
            return _anon("from_json", inner.this, exp.Literal.string(to.sql(DIALECT).lower()))
    return node


def bottom_up(tree: exp.Expression, fn) -> exp.Expression:
    """Apply fn to every node, children before their parent (a rewritten parent keeps its
    rewritten children; sqlglot's transform does not revisit the children of a new node)."""
    for node in reversed(list(tree.walk())):
        new = fn(node)
        if new is not node:
            if node is tree:
                tree = new
            else:
                node.replace(new)
    return tree


UNPIVOT = re.compile(r"\(\s*unpivot\s+(\w+)\s+on\s+([\w\s,]+?)\s+into\s+name\s+(\w+)\s+value\s+(\w+)\s*\)", re.IGNORECASE)


def _unpivot_text(sql: str) -> str:
    """The simplified UNPIVOT statement as a CTE body, rewritten before parsing: sqlglot parses it
    but writes it back in DuckDB's form for Spark too."""
    def repl(m: re.Match) -> str:
        table, columns, name, value = m.groups()
        cols = ", ".join(c.strip() for c in columns.split(","))
        return f"(select * from {table} unpivot ({value} for {name} in ({cols})))"
    return UNPIVOT.sub(repl, sql)


def spark_tree(sql: str, variables: Mapping[str, Any] | None = None) -> exp.Expression:
    """One DuckDB model (a single SELECT, possibly WITH ...) as a tree that generates Spark SQL."""
    frozen = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in (variables or {}).items()))
    return _spark_tree(sql, frozen).copy()


@lru_cache(maxsize=64)
def _spark_tree(sql: str, variables: tuple[tuple[str, Any], ...]) -> exp.Expression:
    # cached: an ingest translates the same staging models again for every file it reads, and
    # parsing a macro-expanded model costs about a second of Python
    # a copy of the model's shared parse (models.parsed), changed in place from here (copy=False):
    # a copy of a macro-expanded model costs as much as a third of its parse
    tree = parsed(_unpivot_text(sql)).copy()
    values = dict(variables)
    tree = tree.transform(lambda n: _expand(n, values), copy=False)
    tree = tree.transform(_json_casts, copy=False)
    return bottom_up(tree, _rewrite)
