"""The human-readable `meterbook reconstruct` table: human units, the inputs' precision, the
assumptions used with value, range and source under each table."""
from __future__ import annotations

import math
from typing import Any

from core.units import KG_PER_T, KWH_PER_MWH
from core.vocabulary import METER_UNITS

# (unit, threshold, divisor, shown unit): a figure at or above the threshold is shown scaled.
SCALES = {"kWh": ((KWH_PER_MWH * KWH_PER_MWH, KWH_PER_MWH * KWH_PER_MWH, "GWh"), (KWH_PER_MWH, KWH_PER_MWH, "MWh")),
          "kg": ((KG_PER_T, KG_PER_T, "t"),)}
MIN_SIG, MAX_SIG = 2, 4


def significant(text: str) -> int:
    """Significant digits of a number as written: '1.3e6' -> 2, '184320' -> 5, '0.0351' -> 3."""
    mantissa = text.strip().lower().replace(",", "").replace("_", "").split("e")[0].lstrip("+-")
    digits = mantissa.replace(".", "").lstrip("0")
    return max(1, len(digits.rstrip("0")) if "." not in mantissa else len(digits))


def sig_of(inputs: dict[str, str]) -> int:
    """Significant figures to print: those of the most precise input, within 2-4."""
    return min(MAX_SIG, max([MIN_SIG, *(significant(t) for t in inputs.values())]))


def fmt(x: float | None, unit: str, sig: int) -> tuple[str, str]:
    """(number, unit) in human units: thousands separators, t above 1,000 kg, MWh above 1,000 kWh."""
    if x is None:
        return "not stated", ""
    for threshold, divisor, shown in SCALES.get(unit, ()):
        if abs(x) >= threshold:
            x, unit = x / divisor, shown
            break
    if unit == "FLOP":
        return f"{x:.{sig - 1}e}", unit
    if x == 0:
        return "0", unit
    decimals = max(0, sig - 1 - math.floor(math.log10(abs(x))))
    rounded = round(x, decimals)
    return f"{rounded:,.{decimals}f}", unit


def render_table(results: list[dict], inputs: list[dict[str, str]] | None = None) -> str:
    lines: list[str] = []
    for i, r in enumerate(results):
        sig = sig_of((inputs or [{}] * len(results))[i])
        lines += [r["model"], f"  source: {r['source']}",
                  f"  operator: {r.get('operator') or 'not stated'}   year: {r.get('year') or 'not stated'}",
                  f"  {'meter':<28}{'value':>14}{'low':>14}{'high':>14}  {'unit':<9}status"]
        for name, m in r["meters"].items():
            v, unit = fmt(m["value"], m["unit"], sig)
            exact = m["low"] == m["value"] == m["high"]
            lo, hi = ("", "") if exact else (_same_unit(m[k], m["unit"], unit, sig) for k in ("low", "high"))
            lines.append(f"  {name:<28}{v:>14}{lo:>14}{hi:>14}  {unit:<9}{m['status']}")
        for c in r["checks"]:
            lines.append("  " + _check_line(c, sig))
        lines += [f"  flag {f['flag']}: {f['message']}" for f in r["flags"]]
        lines += [f"  finding: {f}" for f in r.get("findings", [])]
        if r.get("assumptions"):
            lines.append("  assumptions used:")
            for a in r["assumptions"]:
                lines.append(f"    {a['id']}: {a['value']:g} {a['unit']} (range {a['low']:g}-{a['high']:g}); "
                             f"source: {_short(a['source'])}")
        lines.append("")
    if results:
        run = results[0]["run"]
        lines.append(f"seed {run['seed']}, {run['draws']:,} draws, reference data sha256 {run['reference_sha256'][:12]}")
    return "\n".join(lines)


def _same_unit(x: float, unit: str, shown: str, sig: int) -> str:
    divisor = next((d for _, d, s in SCALES.get(unit, ()) if s == shown), 1.0)
    return fmt(x / divisor, "", sig)[0] if unit != "FLOP" else fmt(x, unit, sig)[0]


def _check_line(c: dict[str, Any], sig: int) -> str:
    unit = "" if c["meter"] == "mfu" else METER_UNITS[c["meter"]]
    rep, u = fmt(c["reported"], unit, sig)
    rec = _same_unit(c["recomputed"], unit, u, sig)
    lo, hi = (_same_unit(c[k], unit, u, sig) for k in ("low", "high"))
    scope = f" ({c['interpretation']['scope']})" if c.get("interpretation") else ""
    why = f": {c['message']}" if c.get("message") and c["status"] != "consistent" else ""
    reported = f"{rep} {u}" if u else rep
    what = "implied" if c["meter"] == "mfu" else "reported"   # the MFU is implied by hours and FLOPs
    return f"check {c['meter']}: {what} {reported}, recomputed {rec} [{lo}, {hi}] -> {c['status']}{scope}{why}"


def _short(source: str, limit: int = 110) -> str:
    return source if len(source) <= limit else source[:limit - 3] + "..."
