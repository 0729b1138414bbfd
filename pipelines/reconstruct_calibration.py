"""Leave-one-out calibration against published training accountings (tests/data/published_footprints.csv).

For every row marked ``calibrate = yes``: hide its output meters (energy_mwh, co2e_location_t,
co2e_market_t), reconstruct them from the rest of the row, and compare with the published
figures. Reported per figure: inside [low, high] or not, |central / published - 1| and high / low.
A published zero (a market-based 0 t) has no ratio and is left out of the error and sharpness.
"""
from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Any

from pipelines.reconstruct import reconstruct_many
from sources.disclosure_format import FIELDS, NUMERIC_FIELDS, engine_input, number

DATASET = Path(__file__).resolve().parents[1] / "tests" / "data" / "published_footprints.csv"
HIDDEN = {"energy_mwh": 1000.0, "co2e_location_t": 1000.0, "co2e_market_t": 1000.0}   # -> kWh, kg


def load_rows(path: Path = DATASET) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def as_disclosure(row: dict[str, str], hide: bool = True) -> dict[str, Any]:
    """A dataset row as engine input, numbers kept as written; the outputs hidden when ``hide``."""
    values = {k: row[k] for k in FIELDS if row.get(k) not in (None, "") and not (hide and k in HIDDEN)}
    values = {k: (number(v) if k in NUMERIC_FIELDS else v) for k, v in values.items()}
    return engine_input(values, {k: row[k] for k in values if k in NUMERIC_FIELDS})


def _meter(row: dict[str, str], key: str) -> str:
    if key == "energy_mwh":
        return "it_energy_kwh" if row.get("energy_scope") == "it" else "facility_energy_kwh"
    return {"co2e_location_t": "co2e_location_kg", "co2e_market_t": "co2e_market_kg"}[key]


def calibrate(rows: list[dict[str, str]] | None = None, draws: int = 10_000, seed: int = 0) -> list[dict]:
    """One record per published figure of the calibration rows."""
    rows = [r for r in (rows or load_rows()) if r["calibrate"] == "yes"]
    results = reconstruct_many([as_disclosure(r) for r in rows], draws=draws, seed=seed)
    out = []
    for row, res in zip(rows, results):
        for key, factor in HIDDEN.items():
            if not row.get(key):
                continue
            published = float(row[key]) * factor
            m = res["meters"].get(_meter(row, key))
            rec = {"model": row["model"], "meter": _meter(row, key), "published": published,
                   "assumed": not (row.get("pue") and row.get("grid_gco2e_per_kwh")),
                   "central": m and m["value"], "low": m and m["low"], "high": m and m["high"]}
            rec["inside"] = bool(m) and m["low"] <= published <= m["high"]
            rec["error"] = abs(m["value"] / published - 1.0) if m and published else None
            rec["ratio"] = m["high"] / m["low"] if m and published and m["low"] > 0 else None
            out.append(rec)
    return out


def summary(records: list[dict]) -> dict[str, float]:
    errors = [r["error"] for r in records if r["error"] is not None]
    ratios = [r["ratio"] for r in records if r["ratio"] is not None]
    return {"rows": len({r["model"] for r in records}), "figures": len(records),
            "coverage": sum(r["inside"] for r in records) / len(records),
            "median_error": statistics.median(errors), "median_high_low": statistics.median(ratios)}


def table(records: list[dict]) -> str:
    lines = [f"{'model':<52}{'meter':<22}{'published':>14}{'central':>14}{'low':>14}{'high':>14}  in  error"]
    for r in records:
        err = f"{r['error']:.1%}" if r["error"] is not None else "-"
        lines.append(f"{r['model'][:51]:<52}{r['meter']:<22}{r['published']:>14,.4g}{r['central'] or 0:>14,.4g}"
                     f"{r['low'] or 0:>14,.4g}{r['high'] or 0:>14,.4g}  {'yes' if r['inside'] else 'NO ':<3} {err}")
    s = summary(records)
    a = summary([r for r in records if r["assumed"]])
    lines.append(f"figures resting on assumed PUE or grid ({a['figures']} of {s['rows']} rows' figures): coverage "
                 f"{a['coverage']:.1%}, median error {a['median_error']:.1%}, median high/low {a['median_high_low']:.2f}")
    lines.append(f"{s['rows']} rows, {s['figures']} figures: coverage {s['coverage']:.1%}, median |central/published - 1| "
                 f"{s['median_error']:.1%}, median high/low {s['median_high_low']:.2f}")
    return "\n".join(lines)
