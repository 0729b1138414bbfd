"""The models (staging, intermediate, marts) use no aggregate whose result follows the order
rows arrive in: DuckDB aggregates in parallel, so such a result moves with whatever else the
warehouse holds (another month, another file) or from one build to the next, which the
month-invariance property catches only when its generated data happen to tie. Read from the
model files themselves, comments left out."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

SQL = Path(__file__).resolve().parents[1] / "pipelines" / "sql"
# ephemeral models (<stage>/ephemeral/) too: they are parts of the models that inline them
MODELS = sorted(p for stage in ("10_staging", "20_intermediate", "30_marts") for p in (SQL / stage).rglob("*.sql"))
# (what, pattern, the order-free way)
RULES = [
    ("any_value()", re.compile(r"\bany_value\s*\("), "pick()"),
    ("mode()", re.compile(r"(?<![\w_])mode\s*\("), "mode_det(list(x))"),
    ("string_agg() without ORDER BY", re.compile(r"\bstring_agg\s*\((?:[^()]|\([^()]*\))*\)", re.S), "string_agg(x, sep order by x)"),
    ("list_distinct(list()) unsorted", re.compile(r"(?<!list_sort\()\blist_distinct\s*\(\s*(?:flatten\s*\(\s*)?list\s*\("),
     "list_sort(list_distinct(list(x)))"),
    ("avg() of a group", re.compile(r"\bavg\s*\((?:[^()]|\([^()]*\))*\)(?!\s*over\b)", re.S), "davg()"),
]


def code(path: Path) -> str:
    return "\n".join(line.split("--", 1)[0] for line in path.read_text().splitlines())


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_no_aggregate_follows_row_order(path: Path) -> None:
    text = code(path)
    found = []
    for what, pattern, instead in RULES:
        for m in pattern.finditer(text):
            if what.startswith("string_agg") and "order by" in m.group(0).lower():
                continue
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{path.name}:{line}: {what}; use {instead}")
    assert not found, "\n".join(found)


def test_the_rules_see_what_they_forbid() -> None:
    bad = {"any_value(host)": 0, "mode(team)": 1, "string_agg(distinct m, ', ')": 2,
           "list_distinct(list(x))": 3, "list_distinct(flatten(list(ids)))": 3, "avg(coalesce(a, b))": 4}
    for text, rule in bad.items():
        assert RULES[rule][1].search(text), text
    good = ["pick(host)", "mode_det(list(team))", "list_sort(list_distinct(list(x)))",
            "avg(rate_w) over (partition by g order by h)"]
    for text in good:
        assert not any(p.search(text) for _, p, _ in RULES), text
    ordered = RULES[2][1].search("string_agg(distinct m, ', ' order by m)")
    assert ordered is not None and "order by" in ordered.group(0)
