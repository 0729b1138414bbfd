"""`meterbook reconstruct`: reconstruct missing meters of published model footprints.

The command object is registered in pipelines/cli.py. Only this module reads files; the
engine (pipelines/reconstruct/__init__.py) works on plain dicts. Disclosure YAML is read by the same
parser as `meterbook ingest` (sources/disclosure_format.py), which keeps each number as written,
so this command and the audit report read the same printed precision.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import click
import yaml

from core.errors import InputError
from pipelines.cli_support import user_errors
from pipelines.reconstruct import (
    NOTHING_USABLE_FIX,
    DisclosureError,
    normalize_disclosure,
    nothing_usable,
    parse_overrides,
    reconstruct_many,
)
from pipelines.reconstruct.render import render_table
from sources.bounded import LimitError, load_yaml
from sources.disclosure_format import (
    NUMBER_TEXT,
    NUMERIC_FIELDS,
    card_stem,
    engine_input,
    parse_hf_card,
    written_numbers,
    yaml_documents,
)

CARD_SUFFIXES = (".md", ".markdown")


def read_card(path: Path) -> dict[str, Any]:
    """A Hugging Face model card, read by the same parser as `meterbook ingest`."""
    try:
        d = parse_hf_card(path.read_text(encoding="utf-8-sig"), source=f"Hugging Face model card ({path.name})",
                          stem=card_stem(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(path, "front matter is not valid YAML", f"line {mark.line + 2}" if mark else "",
                         "Fix the YAML between the --- lines") from None
    except LimitError as exc:
        raise exc.at(path) from None
    values = {k: v for k, v in d.as_dict().items() if k not in ("row_number", "findings", "number_text")}
    return {**engine_input(values, d.number_text), "findings": list(d.findings)}


def read_disclosures(path: Path) -> list[dict[str, Any]]:
    """Every YAML document of a file, each a disclosure mapping with its numbers as written; a
    Markdown file is a Hugging Face model card."""
    if not path.is_file():
        raise InputError(path, "file not found", "", "Check the path")
    if path.suffix.lower() in CARD_SUFFIXES:
        return [read_card(path)]
    try:
        docs = yaml_documents(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else ""
        raise InputError(path, f"not valid YAML: {getattr(exc, 'problem', exc)}", where,
                         "Quote values that contain ':' or '[', e.g. model: \"BLOOM [card]\"") from None
    except LimitError as exc:
        raise exc.at(path) from None
    if not docs:
        raise InputError(path, "no disclosure in the file", "", "Write at least one YAML mapping with model and source")
    for i, (_, d, _) in enumerate(docs, start=1):
        if not isinstance(d, dict):
            raise InputError(path, "a document is not a mapping", f"document {i}", "Write key: value pairs")
    return [engine_input(d, written_numbers(d, texts)) for _, d, texts in docs]


def read_overrides(path: Path | None) -> dict[str, Any]:
    """--assumptions FILE: YAML {id: value | {value, low, high}} or CSV with assumption_id,value,low,high."""
    if path is None:
        return {}
    if not path.is_file():
        raise InputError(path, "file not found", "", "Check the --assumptions path")
    if path.suffix.lower() == ".csv":
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        key = "assumption_id" if rows and "assumption_id" in rows[0] else "coefficient_id"
        raw = {r[key]: {c: r[c] for c in ("value", "low", "high") if r.get(c)} for r in rows if r.get(key)}
    else:
        try:
            raw = load_yaml(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise InputError(path, f"not valid YAML: {exc}", "", "Write id: value or id: {value, low, high}") from None
        except LimitError as exc:
            raise exc.at(path) from None
    if not isinstance(raw, dict):
        raise InputError(path, "not a mapping of assumption ids", "", "Write id: value or id: {value, low, high}")
    try:
        parse_overrides(raw)
    except (DisclosureError, ValueError, KeyError, TypeError) as exc:
        raise InputError(path, f"bad override: {exc}", "", "Give numbers for value, low and high") from None
    return raw


@click.command("reconstruct")
@click.argument("disclosures", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--assumptions", "assumptions_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML {id: value | {value, low, high}} (or CSV assumption_id,value,low,high) overriding "
                   "reference coefficients, e.g. 'pue_unknown: {value: 1.2, low: 1.1, high: 1.4}'.")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON contract: a list, one object per disclosure.")
@click.option("--draws", type=click.IntRange(min=1), default=10_000, show_default=True, help="Monte Carlo draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the Monte Carlo draws.")
@user_errors
def reconstruct(disclosures: tuple[Path, ...], assumptions_file: Path | None, as_json: bool, draws: int,
                seed: int) -> None:
    """Reconstruct missing meters (hours, kWh, CO2e, cost, FLOPs, MFU) of published model
    footprints under stated assumptions, with 5-95 % ranges, sensitivity and consistency checks.
    DISCLOSURES are disclosure YAML files or Hugging Face model cards (.md).

    \b
    Example: meterbook reconstruct tests/data/disclosures/published/llama-7b.yaml --json
    """
    overrides = read_overrides(assumptions_file)
    docs, origin = [], []
    for path in disclosures:
        for i, d in enumerate(read_disclosures(path), start=1):
            docs.append(d)
            origin.append((path, i))
    for d, (path, i) in zip(docs, origin):
        try:
            normalize_disclosure(d)
        except DisclosureError as exc:
            where = f"document {i}" + (f", {exc.where}" if exc.where else "")
            raise InputError(path, exc.what, where, exc.fix) from None
        if nothing_usable(d):
            raise InputError(path, "nothing to reconstruct from", f"document {i}", NOTHING_USABLE_FIX)
    results = reconstruct_many(docs, draws=draws, seed=seed, assumptions_override=overrides)
    inputs = [{k: t for k, t in (d.get(NUMBER_TEXT) or {}).items() if k in NUMERIC_FIELDS} for d in docs]
    click.echo(json.dumps(results, indent=2) if as_json else render_table(results, inputs))
