"""Words for the identifiers the marts hold: rules, categories, meters, energy tiers, findings
(with the action each asks for) and coefficient ids, read from sources/reference/labels.csv.

Reports print these labels, never the identifiers: a reader of a chargeback meets "Split by
measured GPU-hours", not `telemetry_split`. A key the file lacks prints with its underscores
turned into spaces (never as an identifier); tests/test_report_text.py fails on such a gap.
"""
from __future__ import annotations

import csv
import re
from functools import lru_cache

from sources.reference_data import REFERENCE_DIR

LABELS_FILE = REFERENCE_DIR / "labels.csv"


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str], dict[str, str]]:
    with open(LABELS_FILE, newline="", encoding="utf-8") as f:
        return {(r["kind"], r["key"]): r for r in csv.DictReader(f)}


def has_label(kind: str, key: str) -> bool:
    return (kind, key) in _table()


def _plain(key: str) -> str:
    return key.replace("_", " ").replace(":", ", ")


def label(key: object, kind: str) -> str:
    """The words for `key` of `kind` (category, rule, part, meter, tier, basis, finding, metric,
    file, assumption); rules and coefficient ids are composed from their parts."""
    if key is None:
        return ""
    key = str(key)
    if kind == "rule":
        return rule_label(key)
    if kind == "coefficient":
        return coefficient_label(key)
    row = _table().get((kind, key))
    return row["label"] if row else _plain(key)


def action(finding: str) -> str:
    row = _table().get(("finding", finding))
    return row["action"] if row else ""


def rule_label(rule: str) -> str:
    """'telemetry_split' -> its own label; '<category>:<basis>' -> 'Shared services, shared by spend or use'."""
    if ("rule", rule) in _table():
        return _table()[("rule", rule)]["label"]
    head, _, basis = rule.partition(":")
    return f"{label(head, 'rule')}, {label(basis, 'rule_basis')}" if basis else _plain(rule)


def coefficient_label(cid: str) -> str:
    """A coefficient id (file:key...:field, sources/reference_data.coefficient_id) in words:
    'gpu_specs:A100-SXM4-40GB:tdp_w' -> 'A100-SXM4-40GB TDP'."""
    file, _, rest = cid.partition(":")
    parts = rest.split(":")
    if file == "assumptions":
        return label(rest, "assumption")
    if file == "gpu_specs" and len(parts) == 2:
        return f"{parts[0]} {label(parts[1], 'metric')}"
    if file == "grid_intensity" and len(parts) >= 4:
        # zone ids may hold a colon themselves (aws:us-east-1)
        return f"Grid intensity {':'.join(parts[1:-2])}, {parts[-2]} ({label(parts[-1], 'basis')})"
    if file == "pue" and len(parts) == 3:
        where = " ".join(p for p in (parts[0].upper(), parts[1]) if p)
        return f"PUE {where} ({parts[2]})".replace("_", " ")
    if file == "operators" and len(parts) == 3:
        return f"{parts[0].capitalize()} {label(parts[2], 'metric')}, {parts[1]}"
    if file == "embodied" and len(parts) == 2:
        return f"Embodied carbon of a {parts[1]}, {parts[0]}"
    return f"{label(file, 'file')} {' '.join(parts)}".replace("_", " ")


COEFFICIENT_ID = re.compile(r"\b(?:gpu_specs|grid_intensity|pue|embodied|assumptions|operators|convention_tdp|check_limits):[\w.:-]*\w")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# A file inside a repository or folder a source cites ('codecarbon/data/cloud/impact.csv'): a page
# names the file, the reference data keep the whole citation. A web address (a dot in its first
# part) stays.
CITED_PATH = re.compile(r"(?<![\w./-])(?:[\w-]+/)+([\w.-]*\.[a-z]{2,7})\b")


def plain(text: object) -> str:
    """Free text written by an engine (a method, a flag's message, a source) with the identifiers
    in it put into words: coefficient ids and meter or assumption names by their labels, any other
    snake_case name with spaces, a file a source cites inside a repository by its name alone."""
    if text is None:
        return ""
    out = COEFFICIENT_ID.sub(lambda m: coefficient_label(m.group(0)), CITED_PATH.sub(r"\1", str(text)))

    def word(m: re.Match) -> str:
        for kind in ("meter", "assumption", "metric"):
            if has_label(kind, m.group(0)):
                return label(m.group(0), kind)
        return m.group(0).replace("_", " ")
    return SNAKE.sub(word, out)
