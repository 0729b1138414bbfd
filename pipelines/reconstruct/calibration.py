"""Leave-one-out calibration against published training accountings (sources/reference/calibration/published_footprints.csv).

For every row marked ``calibrate = yes``: hide its output meters (energy_mwh, co2e_location_t,
co2e_market_t), reconstruct them from the rest of the row, and compare with the published
figures. Reported per figure: inside [low, high] or not, |central / published - 1| and high / low.

Two populations are summarised, because they answer different questions:
- all figures: does the engine reproduce published accountings, including those that publish
  their PUE and grid factor (then it only does the arithmetic and carries the rounding);
- figures resting on assumptions (the meter's status is ``estimated``: at least one coefficient
  with a range came from the reference data, not from the row): is the engine honest where it
  has to guess? This is the population a researcher's partial disclosure falls in.
A third run is a diagnostic of the priors alone: the rows that publish their PUE or grid factor,
again with those removed (``without_published_factors``), so that the operator, facility, year and
zone priors have to stand in for them, as they do for a researcher's partial disclosure.
A published zero (a market-based 0 t) has no ratio and is trivially matched by a zero factor, so
zeros are counted apart, not in coverage, error or sharpness. A figure outside its range is shown
again to the engine with only that figure visible: the consistency check then says whether one of
the reporters' conventions (energy without PUE, TDP instead of measured power, ...) reconciles it.
That is reported beside the miss, never counted as coverage.
"""
from __future__ import annotations

import csv
import re
import statistics
from pathlib import Path
from typing import Any

from core.units import H_PER_DAY
from pipelines.reconstruct import reconstruct_many
from pipelines.reconstruct.checks import CHECKED, checked_meter
from sources.disclosure_format import FIELDS, NUMERIC_FIELDS, engine_input, number

DATASET = Path(__file__).resolve().parents[2] / "sources" / "reference" / "calibration" / "published_footprints.csv"
# The output figures hidden and compared, with their factor to the meter's unit (kWh, kg).
HIDDEN = {k: factor for k, factor in CHECKED if k in ("energy_mwh", "co2e_location_t", "co2e_market_t")}


def load_rows(path: Path = DATASET) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def as_disclosure(row: dict[str, str], hide: bool = True, show: str | None = None) -> dict[str, Any]:
    """A dataset row as engine input, numbers kept as written; the outputs hidden when ``hide``,
    except ``show``."""
    values: dict[str, Any] = {k: row[k] for k in FIELDS
                              if row.get(k) not in (None, "") and not (hide and k in HIDDEN and k != show)}
    values = {k: (number(v) if k in NUMERIC_FIELDS else v) for k, v in values.items()}
    return engine_input(values, {k: row[k] for k in values if k in NUMERIC_FIELDS})


def calibrate(rows: list[dict[str, str]] | None = None, draws: int = 10_000, seed: int = 0,
              explain: bool = True) -> list[dict]:
    """One record per published figure of the calibration rows; with ``explain``, what the
    consistency check says of each figure outside its range."""
    rows = [r for r in (rows or load_rows()) if r["calibrate"] == "yes"]
    results = reconstruct_many([as_disclosure(r) for r in rows], draws=draws, seed=seed)
    out = []
    for row, res in zip(rows, results):
        for key, factor in HIDDEN.items():
            if row.get(key):
                rec = _record(row, key, float(row[key]) * factor, res["meters"].get(checked_meter(row, key)))
                out.append({**rec, "classes": classes(row, res.get("operator"))})
    if explain:
        _explain_misses(out, {r["model"]: r for r in rows}, draws, seed)
    return out


# Reporting classes of an accounting (not coefficients): accelerator-hours and year bucket edges.
SIZE_EDGES_H = (1_000, 100_000)
YEAR_EDGES = (2020, 2023)
HARDWARE = (("TPU", re.compile(r"tpu", re.I)), ("H100/H800/H20", re.compile(r"h100|h800|h20\b", re.I)),
            ("A100", re.compile(r"a100", re.I)), ("V100/P100", re.compile(r"[vp]100", re.I)))


def _hours(row: dict[str, str]) -> float | None:
    if row.get("accelerator_hours"):
        return number(row["accelerator_hours"])
    count, days = number(row.get("accelerator_count") or None), number(row.get("training_days") or None)
    return count * days * H_PER_DAY if count and days else None


def classes(row: dict[str, str], operator: str | None) -> dict[str, str]:
    """The classes a row is reported in: operator, size (accelerator-hours), hardware, year."""
    hours = _hours(row)
    size = ("unknown" if hours is None else f"< {SIZE_EDGES_H[0]:,} h" if hours < SIZE_EDGES_H[0]
            else f"{SIZE_EDGES_H[0]:,}-{SIZE_EDGES_H[1]:,} h" if hours < SIZE_EDGES_H[1] else f">= {SIZE_EDGES_H[1]:,} h")
    year = int(number(row["year"]) or 0) if row.get("year") else None
    period = ("unknown" if year is None else f"< {YEAR_EDGES[0]}" if year < YEAR_EDGES[0]
              else f"{YEAR_EDGES[0]}-{YEAR_EDGES[1] - 1}" if year < YEAR_EDGES[1] else f">= {YEAR_EDGES[1]}")
    hardware = next((name for name, rx in HARDWARE if rx.search(row.get("accelerator") or "")), "other")
    return {"operator": operator or "none named", "size": size, "hardware": hardware, "year": period}


def by_class(records: list[dict], min_rows: int = 5) -> list[tuple[str, str, dict]]:
    """(dimension, class, summary) for every class with at least ``min_rows`` rows."""
    out = []
    for dim in ("operator", "size", "hardware", "year"):
        for label in sorted({r["classes"][dim] for r in records}):
            s = summary([r for r in records if r["classes"][dim] == label])
            if s["rows"] >= min_rows and s["figures"]:
                out.append((dim, label, s))
    return out


def class_lines(records: list[dict], min_rows: int = 5) -> list[str]:
    """The per-class table of the README: one line per class with ``min_rows`` rows or more."""
    lines = ["| class | rows | figures | coverage | median error | median high/low |", "|---|---:|---:|---:|---:|---:|"]
    for dim, label, s in by_class(records, min_rows):
        lines.append(f"| {dim}: {label} | {s['rows']} | {s['figures']} | {s['coverage']:.1%} | "
                     f"{s['median_error']:.1%} | {s['median_high_low']:.2f} |")
    return lines


def _record(row: dict[str, str], key: str, published: float, m: dict | None) -> dict:
    rec = {"model": row["model"], "key": key, "meter": checked_meter(row, key), "published": published,
           "zero": published == 0, "status": m and m["status"], "assumed": bool(m and m["status"] == "estimated"),
           "assumptions": m["assumptions"] if m else [],
           "central": m and m["value"], "low": m and m["low"], "high": m and m["high"], "check": None, "scope": None}
    rec["inside"] = bool(m and m["low"] <= published <= m["high"])
    rec["error"] = abs(m["value"] / published - 1.0) if m and published else None
    rec["ratio"] = m["high"] / m["low"] if m and published and m["low"] > 0 else None
    return rec


def _explain_misses(records: list[dict], rows: dict[str, dict], draws: int, seed: int) -> None:
    misses = [r for r in records if not r["inside"] and not r["zero"]]
    shown = reconstruct_many([as_disclosure(rows[r["model"]], show=r["key"]) for r in misses], draws=draws, seed=seed)
    for rec, res in zip(misses, shown):
        check = next((c for c in res["checks"] if c["meter"] == rec["meter"]), None)
        if check is not None:
            rec["check"], rec["scope"] = check["status"], (check.get("interpretation") or {}).get("scope")


# Fields a reporter's own factors sit in; removed for the diagnostic of the priors, with the market
# figure that rests on the market factor.
PUBLISHED_FACTORS = ("pue", "grid_gco2e_per_kwh", "market_gco2e_per_kwh", "co2e_market_t")


def without_published_factors(rows: list[dict[str, str]] | None = None) -> list[dict[str, str]]:
    """The calibration rows that publish a PUE or grid factor, with those factors removed. Run them
    with ``explain=False``: with the reporter's own factors gone, a check's 'explanation' of a miss
    would only trade one missing factor for another."""
    return [{**r, **{k: "" for k in PUBLISHED_FACTORS}} for r in (rows or load_rows())
            if r["calibrate"] == "yes" and (r.get("pue") or r.get("grid_gco2e_per_kwh"))]


def summary(records: list[dict]) -> dict[str, Any]:
    """Coverage, median |central / published - 1| and median high / low over the non-zero figures."""
    figures = [r for r in records if not r["zero"]]
    errors = [r["error"] for r in figures if r["error"] is not None]
    ratios = [r["ratio"] for r in figures if r["ratio"] is not None]
    zeros = [r for r in records if r["zero"]]
    return {"rows": len({r["model"] for r in records}), "figures": len(figures),
            "coverage": sum(r["inside"] for r in figures) / len(figures) if figures else float("nan"),
            "median_error": statistics.median(errors) if errors else float("nan"),
            "median_high_low": statistics.median(ratios) if ratios else float("nan"),
            "explained": sum(r["check"] == "explained" for r in figures),
            "zeros": len(zeros), "zeros_matched": sum(r["inside"] for r in zeros)}


def _verdict(r: dict) -> str:
    if r["inside"]:
        return "yes"
    if r["check"] == "explained":
        return f"NO  (check: explained, {r['scope']})"
    return f"NO  (check: {r['check']})" if r["check"] else "NO"


def summary_lines(records: list[dict], priors: list[dict] | None = None) -> list[str]:
    """The calibration lines the README and `make bench BENCH=reconstruct` print: (a) all figures,
    (b) those resting on assumptions and, given ``priors`` (calibrate(without_published_factors())),
    (c) the priors alone."""
    out = []
    populations = [("(a) all figures", records),
                   ("(b) figures resting on assumptions", [r for r in records if r["assumed"]])]
    if priors is not None:
        populations.append(("(c) priors alone (rows publishing PUE/grid, both removed)", priors))
    for label, subset in populations:
        s = summary(subset)
        out.append(f"{label}: {s['figures']} figures from {s['rows']} rows: coverage {s['coverage']:.1%}, "
                   f"median |central/published - 1| {s['median_error']:.1%}, median high/low {s['median_high_low']:.2f}"
                   f"; outside but explained by a reporters' convention: {s['explained']}; "
                   f"published zeros (not counted): {s['zeros_matched']} of {s['zeros']} reproduced")
    return out


def _rows(records: list[dict]) -> list[str]:
    lines = [f"{'model':<50}{'meter':<20}{'status':<10}{'published':>12}{'central':>12}{'low':>12}{'high':>12}"
             f"{'high/low':>9}{'error':>7}  inside"]
    for r in records:
        err = f"{r['error']:.1%}" if r["error"] is not None else "-"
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        lines.append(f"{r['model'][:49]:<50}{r['meter']:<20}{r['status'] or '-':<10}{r['published']:>12,.4g}"
                     f"{r['central'] or 0:>12,.4g}{r['low'] or 0:>12,.4g}{r['high'] or 0:>12,.4g}{ratio:>9}{err:>7}  "
                     f"{_verdict(r)}")
    return lines


def table(records: list[dict], priors: list[dict] | None = None) -> str:
    """Every figure of the leave-one-out run, the priors-alone run's figures outside their range,
    then the summary lines."""
    lines = _rows(records)
    if priors is not None:
        lines += ["", "priors alone: figures outside their range", *_rows([r for r in priors if not r["inside"]])[1:]]
    return "\n".join(lines + [""] + summary_lines(records, priors) + ["", "leave-one-out per class (5 rows or more):",
                                                                      *class_lines(records)])
