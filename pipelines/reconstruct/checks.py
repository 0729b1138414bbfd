"""Consistency checks and plausibility flags of a disclosure.

Each reported figure (hours, energy, CO2e, cost) is recomputed from the rest of the disclosure
with its range, under the disclosure's own reading and under the reporters' known conventions
(energy without PUE, TDP instead of measured power, ...). The verdict has three levels, plus
the scope interpretation that reconciles a figure:

- ``consistent``: the reported figure lies in the recomputed range;
- ``explained``: it lies in the range once a named convention is applied (``interpretation``);
- ``unusual``: outside every 5-95 % range, yet reached by some reading within the disclosure's
  stated ranges (assumptions at the ends of their low-high) and physically possible; ``message``
  prints the direction and the implied value and its band, e.g. "implies MFU 0.155, typical 0.2-0.55";
- ``inconsistent``: no reading within the stated ranges reaches the figure (the message gives
  the factor and direction: "too low: reported 0.2 is 100x below the lowest reading ..."), or it is
  impossible under every reading (MFU above 1, more accelerator-hours than count x days allow,
  energy above hours x TDP x host allowance x the worst PUE, a grid above any real grid). The
  limits are rows of sources/reference/check_limits.csv.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from core.units import G_PER_KG, H_PER_DAY, KG_PER_T, KWH_PER_MWH, S_PER_H, W_PER_KW
from pipelines import estimators as est
from pipelines.reconstruct import reference as ref
from pipelines.reconstruct.graph import Graph
from pipelines.reconstruct.sampling import DERIVED, REPORTED, STATUS, MonteCarlo, Q, extremes, interval

# (reported key, unit factor) -> meter it reports; energy follows the disclosure's scope.
CHECKED = (("accelerator_hours", 1.0), ("energy_mwh", KWH_PER_MWH), ("co2e_location_t", KG_PER_T),
           ("co2e_market_t", KG_PER_T), ("cost_usd", 1.0))


def plausibility(g: Graph) -> list[dict]:
    """Flag implied values outside the check limits (sources/reference/check_limits.csv)."""
    lim, d, out = ref.check_limits(), g.d, []

    def outside(what: str, value: float, low_id: str | None, high_id: str | None) -> None:
        for limit_id, bad in ((low_id, lambda v, x: v < x), (high_id, lambda v, x: v > x)):
            if limit_id and bad(value, lim[limit_id]["value"]):
                out.append({"flag": "implausible", "quantity": what, "value": value, "limit": lim[limit_id]["id"],
                            "message": f"{what} = {value:.4g} is beyond the check limit {lim[limit_id]['value']:g}"})

    if "mfu" in g.meters:
        outside("mfu", g.meters["mfu"][0].value, "mfu_min", "mfu_max")
    if d.get("grid_gco2e_per_kwh") is not None:
        outside("grid_gco2e_per_kwh", d["grid_gco2e_per_kwh"], "grid_intensity_min", "grid_intensity_max")
    if g.co2e_rep is not None and g.fac_rep is not None and g.fac_rep.value > 0:
        implied = est.intensity_g_per_kwh(g.co2e_rep.value, g.fac_rep.value)
        outside("implied grid intensity (reported CO2e / energy), gCO2e/kWh", implied,
                "grid_intensity_min", "grid_intensity_max")
    if d.get("pue") is not None:
        outside("pue", d["pue"], "pue_min", None)
    # System power per accelerator includes the host and may exceed chip TDP; board power may not.
    if d.get("power_w") is not None and d.get("power_basis") != "system" and g.tdp_spec is not None:
        ratio = d["power_w"] / g.tdp_spec["high"]
        outside(f"power_w / TDP ({g.tdp_spec['coefficient_id']})", ratio, None, "power_max_fraction_of_tdp")
    # Power implied by reported energy and hours (no power given): above TDP means the energy
    # includes host power (then say power_basis: system) or the hours are understated.
    it = g.meters.get("it_energy_kwh")
    hours = g.meters.get("accelerator_hours")
    if (d.get("power_w") is None and g.tdp_spec is not None and it and hours and hours[0].value > 0
            and it[0].rank <= DERIVED and hours[0].rank <= DERIVED and "reported" in it[1]):
        implied = est.power_w_from_it_energy(it[0].value, hours[0].value) / g.tdp_spec["high"]
        outside(f"implied power (reported energy / hours) / TDP ({g.tdp_spec['coefficient_id']})", implied,
                None, "power_max_fraction_of_tdp")
    return out


def checked_meter(d: Mapping[str, Any], key: str) -> str:
    """The meter a reported figure reports: energy_mwh is IT or facility energy by its stated scope."""
    if key == "energy_mwh":
        return "it_energy_kwh" if d.get("energy_scope") == "it" else "facility_energy_kwh"
    return {"accelerator_hours": "accelerator_hours", "co2e_location_t": "co2e_location_kg",
            "co2e_market_t": "co2e_market_kg", "cost_usd": "cost_usd"}[key]


def _interpretations(d: Mapping[str, Any], key: str) -> list[tuple[str, str, str]]:
    """(alt, meter, text): reporters' conventions that may explain a mismatch, most common first."""
    out: list[tuple[str, str, str]] = []
    stated = "" if d.get("energy_scope") else " (energy_scope not stated)"
    if key == "energy_mwh" and d.get("energy_scope") == "it":
        out.append(("", "facility_energy_kwh", "energy reported including PUE although stated as IT energy"))
    elif key == "energy_mwh":
        out.append(("no_pue", "facility_energy_kwh", f"energy reported without PUE (IT energy only){stated}"))
    if key == "co2e_location_t":
        out.append(("no_pue", "co2e_location_kg", "CO2e computed on IT energy, PUE not applied"))
    if key in ("energy_mwh", "co2e_location_t"):
        meter = checked_meter(d, key)
        if d.get("power_basis") in ("measured", "system"):
            out.append(("tdp_power", meter, "energy computed at TDP rather than the disclosed measured power"))
        elif d.get("power_basis") == "tdp":
            out.append(("measured_power", meter, "energy at measured board power rather than the stated TDP"))
        else:
            out.append(("tdp_power", meter, "energy computed at TDP x hours (the usual published convention)"))
    return out


def pending_checks(graph: Graph) -> list[dict]:
    """For each reported meter of a disclosure's graph: recompute it from the rest of the
    disclosure (and under each scope interpretation). Statuses are decided once the ranges are known."""
    d, pending = graph.d, []
    for key, factor in CHECKED:
        if d.get(key) is None:
            continue
        hidden = {**d, key: None}
        meter = checked_meter(d, key)
        g = graph.variant(hidden, "", meter)
        main = g.meters.get(meter)
        if main is None:
            continue
        alts = []
        for alt, alt_meter, text in _interpretations(d, key):
            q = graph.variant(hidden, alt, alt_meter).meters.get(alt_meter)
            if q is not None:
                alts.append((text, q[0]))
        eps = d["_eps"].get(key, 0.0)
        reported = Q(d[key] * factor, rlo=1.0 - eps, rhi=1.0 + eps, rank=REPORTED)
        pending.append({"meter": meter, "key": key, "reported": reported, "recomputed": main, "alternatives": alts,
                        "graph": g})
    return pending


def check_json(c: dict, mc: MonteCarlo) -> dict:
    reported, (rec, how) = c["reported"], c["recomputed"]
    low, high = interval(rec, mc)
    r_low, r_high = reported.value * reported.rlo, reported.value * reported.rhi

    def fits(lo: float, hi: float) -> bool:  # the reported figure, within its own rounding, meets the range
        return r_high >= lo and r_low <= hi

    status, interpretation, message = "consistent", None, None
    if not fits(low, high):
        for text, q in c["alternatives"]:
            a_low, a_high = interval(q, mc)
            if fits(a_low, a_high):
                status = "explained"
                interpretation = {"scope": text, "recomputed": q.value, "low": a_low, "high": a_high}
                break
        else:
            status, message = _beyond(c, (low, high), [rec, *(q for _, q in c["alternatives"])])
    rel = est.relative_error(rec.value, reported.value) if reported.value else None
    rel = rel if rel is not None and math.isfinite(rel) else None  # a subnormal reported figure
    return {"meter": c["meter"], "reported": reported.value, "recomputed": rec.value, "low": low, "high": high,
            "relative_error": rel, "status": status, "interpretation": interpretation, "message": message,
            "recomputed_status": STATUS[rec.rank], "method": how}


def _limit(limit_id: str) -> float:
    return ref.check_limits()[limit_id]["value"]


def _direction(value: float, recomputed: tuple[float, float]) -> str:
    return "too low" if value < recomputed[0] else "too high"


def _beyond(c: dict, recomputed: tuple[float, float], readings: list[Q]) -> tuple[str, str]:
    """(status, message) of a figure outside every reading's 5-95 % range.

    ``inconsistent`` exactly when no reading within the disclosure's stated ranges (every
    assumption anywhere in its low-high, every named convention) reaches the figure, or when it is
    physically impossible; the message gives the factor of the disagreement, its direction and
    the scope. Otherwise ``unusual``: reachable, but only at the ends of the stated ranges.
    Reported hours are the exception: fewer than count x days allow is a reading (idle GPUs)."""
    possible, why = _possible(c, recomputed)
    if c["key"] == "accelerator_hours":
        return ("unusual" if possible else "inconsistent"), why
    value = c["reported"].value
    ends = [extremes(q) for q in readings]
    lowest, highest = min(lo for lo, _ in ends), max(hi for _, hi in ends)
    r_low, r_high = value * c["reported"].rlo, value * c["reported"].rhi
    if r_high < lowest:
        factor = f"{lowest / value:,.3g}x below the lowest" if value > 0 else "zero, below the lowest"
        edge = lowest
    elif r_low > highest:
        factor = f"{value / highest:,.3g}x above the highest" if highest > 0 else "above zero, the highest"
        edge = highest
    else:
        return ("unusual" if possible else "inconsistent"), why
    implied = why.split(": ", 1)[1] if why.startswith(("too low: ", "too high: ")) else why
    return "inconsistent", (f"{_direction(value, recomputed)}: reported {value:.4g} is {factor} reading within the "
                            f"disclosure's stated ranges ({edge:.4g}); {implied}")


def _possible(c: dict, recomputed: tuple[float, float]) -> tuple[bool, str]:
    """Whether a figure outside every recomputed range is still physically possible, and the
    implied value that says why it stands out, with its direction (too low / too high) and, for
    energy, the scope it was read in (IT or facility)."""
    g, key, value = c["graph"], c["key"], c["reported"].value   # in the meter's unit: kWh, kg, h
    lo, hi = recomputed
    direction = _direction(value, recomputed)
    plain = f"{direction}: reported {value:.4g} outside the recomputed {lo:.4g}-{hi:.4g}"
    d, tdp = g.d, g.tdp_spec
    wall = (d["accelerator_count"] * d["training_days"] * H_PER_DAY
            if d.get("accelerator_count") and d.get("training_days") else None)
    hours = d.get("accelerator_hours") or wall
    if key == "accelerator_hours" and wall:
        ratio = value / wall
        slack = 1.0 + d["_eps"].get("accelerator_count", 0.0) + d["_eps"].get("training_days", 0.0)
        return ratio <= slack, f"implies the accelerators ran {ratio:.0%} of accelerator_count x training_days"
    if key == "energy_mwh" and hours and tdp:
        it_scope = d.get("energy_scope") == "it"
        per_acc = value / hours * W_PER_KW   # W per accelerator, in the figure's own scope
        top = tdp["high"] * _limit("system_power_max_fraction_of_tdp") * (1.0 if it_scope else _limit("pue_max"))
        bottom = tdp["low"] * _limit("power_min_fraction_of_tdp")
        scope = ("IT energy (no PUE)" if it_scope else "facility energy (incl. PUE)" if d.get("energy_scope")
                 else "read as facility energy (incl. PUE; scope not stated)")
        side = (f"below the {bottom:,.0f} W a running {tdp['high']:g} W part draws at least" if per_acc < bottom
                else f"above the {top:,.0f} W a {tdp['high']:g} W part can draw" if per_acc > top
                else f"possible {bottom:,.0f}-{top:,.0f} W for a {tdp['high']:g} W part")
        return bottom <= per_acc <= top, f"{direction}: implies {per_acc:,.0f} W per accelerator-hour, {scope}; {side}"
    if key in ("co2e_location_t", "co2e_market_t"):
        energy = g.meters.get("facility_energy_kwh")
        top_energy = (hours * tdp["high"] / W_PER_KW * _limit("system_power_max_fraction_of_tdp") * _limit("pue_max")
                      if hours and tdp else (energy[0].value if energy else None))
        if not top_energy:
            return True, plain
        implied = value * G_PER_KG / top_energy   # g/kWh at the most energy possible
        grid_max = _limit("grid_intensity_max")
        central = value * G_PER_KG / energy[0].value if energy and energy[0].value else implied
        if implied > grid_max:
            return False, (f"too high: implies {central:,.0f} gCO2e/kWh on the recomputed energy and at least "
                           f"{implied:,.0f} at the most energy possible; no grid exceeds {grid_max:,.0f}")
        grid_lo, grid_hi = extremes(g.grid)
        return True, (f"{direction}: implies {central:,.0f} gCO2e/kWh on the recomputed energy; the stated location's "
                      f"factor spans {grid_lo:,.0f}-{grid_hi:,.0f}")
    return True, plain


def mfu_check(g: Graph) -> dict | None:
    """MFU implied by reported hours (or count x days), FLOPs and the part's dense peak, against
    the typical band (assumptions.csv mfu_typical) and the physical limit 1."""
    d = g.d
    hours = d.get("accelerator_hours") or (d["accelerator_count"] * d["training_days"] * H_PER_DAY
                                           if d.get("accelerator_count") and d.get("training_days") else None)
    if not hours or g.flops is None or g.peak is None:
        return None
    implied = g.flops.value / (hours * S_PER_H * g.peak.value)
    typical = ref.assumption("mfu_typical")
    band = f"typical {typical['low']:g}-{typical['high']:g}"
    if typical["low"] <= implied <= typical["high"]:
        status, message = "consistent", f"implies MFU {implied:.3g}, {band}"
    elif implied <= _limit("mfu_possible_max"):
        status, message = "unusual", f"implies MFU {implied:.3g}, {band}"
    else:
        status, message = "inconsistent", f"implies MFU {implied:.3g}: above 1, impossible ({band})"
    return {"meter": "mfu", "reported": implied, "recomputed": typical["value"], "low": typical["low"],
            "high": typical["high"], "relative_error": est.relative_error(typical["value"], implied),
            "status": status, "interpretation": None, "message": message, "recomputed_status": "estimated",
            "method": f"train_flops / (accelerator_hours x 3600 s/h x {g.precision} dense peak), against mfu_typical"}
