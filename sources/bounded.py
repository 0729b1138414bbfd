"""YAML, TOML and JSON from users, read within stated limits (sources/input_limits.csv).

Every structured document meterbook reads whole (disclosure YAML, a model card's front matter,
meterbook.toml, --assumptions, a delivery manifest, the first record of a JSON-lines file) is
read here. Three things would otherwise let a small file take the machine:

* YAML aliases: nine anchors of nine aliases each expand to 9^9 values when a value is printed or
  checked (a "billion laughs"). Disclosures and cards need no aliases, so anchors and aliases are
  refused outright, not given a budget.
* nesting: Python's parsers (tomllib, json, PyYAML's composer) recurse once per level, so a few
  thousand brackets end in a RecursionError; PyYAML's scanner also slows quadratically on a line
  of open brackets. Depth is counted before parsing, and again while composing YAML blocks.
* size: pure-Python YAML holds tens of bytes per byte of text.

A limit passed raises LimitError (what, where, fix), which callers turn into their one-line
`Error: <file>: ...`.
"""
from __future__ import annotations

import csv
import json
import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from core.errors import InputError

LIMITS_FILE = Path(__file__).parent / "input_limits.csv"

# Tokens that matter to nesting: strings and comments (skipped), and the brackets themselves.
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_TOML_TOKENS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]')
# YAML: every bracket counts, quoted or not (a plain scalar may hold an apostrophe, so quotes
# cannot be trusted to pair); a disclosure with 64 brackets open inside a string is no disclosure.
_YAML_TOKENS = re.compile(r"[\[\]{}]")


class LimitError(Exception):
    """A document past one of the input limits: what, where, and how to fix it."""

    def __init__(self, what: str, where: str, fix: str) -> None:
        self.what, self.where, self.fix = what, where, fix
        super().__init__(f"{what} ({where}). {fix}" if where else f"{what}. {fix}")

    def at(self, file: str | Path) -> InputError:
        """The same problem as the user error of one file."""
        return InputError(file, self.what, self.where, self.fix)


@lru_cache(maxsize=None)
def limits() -> dict[str, float]:
    """limit_id -> value, from sources/input_limits.csv."""
    with open(LIMITS_FILE, newline="", encoding="utf-8") as fh:
        return {r["limit_id"]: float(r["value"]) for r in csv.DictReader(fh)}


def limit(limit_id: str) -> float:
    return limits()[limit_id]


def check_size(text: str | bytes, what: str) -> None:
    """A document larger than structured_bytes_max is refused before any parser sees it."""
    size = len(text.encode("utf-8")) if isinstance(text, str) else len(text)
    most = int(limit("structured_bytes_max"))
    if size > most:
        raise LimitError(f"{what} is {size:,} bytes, more than meterbook reads ({most:,}, structured_bytes_max)",
                         "whole file", "Split it into smaller files")


def check_depth(text: str, tokens: re.Pattern[str], what: str, first_line: int = 1) -> None:
    """Brackets and braces (outside strings and comments) nested deeper than nesting_depth_max;
    `first_line`: the file's line number of the text's first line, for messages."""
    most, depth = int(limit("nesting_depth_max")), 0
    for m in tokens.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > most:
                raise _too_deep(what, f"line {text.count(chr(10), 0, m.start()) + first_line}", most)
        elif c in "]}":
            depth = max(depth - 1, 0)


def _too_deep(what: str, where: str, most: int) -> LimitError:
    return LimitError(f"{what} nests more than {most} levels deep (nesting_depth_max)", where,
                      "Flatten the document; no meterbook input needs that depth")


def load_toml(text: str) -> dict[str, Any]:
    """tomllib.loads within the limits; tomllib.TOMLDecodeError on bad syntax."""
    check_size(text, "the TOML document")
    check_depth(text, _TOML_TOKENS, "the TOML document")
    return tomllib.loads(text)


def load_json(text: str, what: str = "the JSON document") -> Any:
    """json.loads within the limits; ValueError (json.JSONDecodeError) on bad syntax."""
    check_size(text, what)
    check_depth(text, _JSON_TOKENS, what)
    return json.loads(text)


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader without anchors or aliases, and with a depth limit on blocks
    (flow brackets are counted before parsing: see yaml_loader)."""

    def __init__(self, stream: str, first_line: int = 1) -> None:
        super().__init__(stream)
        self.depth = 0
        self.most = int(limit("nesting_depth_max"))
        self.first_line = first_line

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        line = f"line {event.start_mark.line + self.first_line}"
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise LimitError(f"YAML {'alias *' if isinstance(event, yaml.AliasEvent) else 'anchor &'}{event.anchor}: "
                             "meterbook reads no anchors or aliases", line, "Write each value out where it is used")
        nests = isinstance(event, yaml.CollectionStartEvent)   # a scalar is a leaf, not a level
        self.depth += nests
        if self.depth > self.most:
            raise _too_deep("the YAML document", line, self.most)
        try:
            return super().compose_node(parent, index)   # type: ignore[no-untyped-call]
        finally:
            self.depth -= nests


def yaml_loader(text: str, first_line: int = 1) -> BoundedLoader:
    """A loader over `text` after the size and flow-depth checks; the caller disposes of it.
    `first_line`: the file's line number of the text's first line (a card's front matter: 2)."""
    check_size(text, "the YAML document")
    check_depth(text, _YAML_TOKENS, "the YAML document", first_line)
    return BoundedLoader(text, first_line)


def load_yaml(text: str, first_line: int = 1) -> Any:
    """yaml.safe_load within the limits; yaml.YAMLError on bad syntax."""
    loader = yaml_loader(text, first_line)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
