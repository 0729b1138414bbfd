"""Reconstruct missing meters of a published model footprint, with ranges and sensitivity.

``reconstruct(disclosure)`` returns one object of the ``reconstruct --json`` contract
(design.md); ``reconstruct_many`` does a batch and shares the Monte Carlo work across it.

How a figure gets its range
- A reported figure is exact up to its printed precision: "14.8 days" means 14.75-14.85.
  Rounding is bounded, not random, so it is carried by interval arithmetic (``rlo``/``rhi``).
- Every assumption (a reference row with low < value < high) is a random variable with a
  PERT distribution over (low, central, high): the reference files give low/high as the
  plausible extremes of the peer spread and central as the best estimate, and PERT (a beta
  with the mode at the central value, lambda 4) keeps most mass near the central value
  while still reaching the extremes; a triangular distribution would overweight them.
- Draws come from one seeded Latin hypercube over the assumption slots (scipy.stats.qmc),
  shared by every disclosure of a batch. Each meter is central x a product of
  (assumption / its central) ratios, so its distribution depends only on the shapes of
  those ratios: identical shapes (same reference rows) are sampled and ranked once.
  low/high = the 5th/95th percentiles, widened by the rounding interval and always
  containing the central value (a central assumption at the edge of its range, e.g. the
  A100's 400 W TDP in [400, 500] W, would otherwise fall outside its own interval).
- Sensitivity (tornado): each assumption at its low and at its high, the others central.

Scope. ``it_energy_kwh`` is accelerator energy as published footprints scope it: board power
(measured, or TDP x an assumed fraction) unless ``power_basis: system`` says the figure already
includes the host; host servers are not added. ``facility_energy_kwh`` applies PUE. An
``energy_mwh`` without ``energy_scope`` is read as facility energy (flagged), and the
consistency checks test the IT reading.
"""
from __future__ import annotations

import difflib
import fnmatch
import math
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from scipy.special import betaincinv
from scipy.stats import qmc

from pipelines import estimators as est
from pipelines.units import KG_PER_T, KWH_PER_MWH, PERCENT
from sources import reference_data as rd
from sources.disclosure_format import NUMBER_TEXT, number, number_as_text

P_LOW, P_HIGH = 5.0, 95.0   # the contract's low/high percentiles
PERT_LAMBDA = 4.0           # the standard PERT weight on the mode (a shape definition, not a coefficient)
HALF_UNIT = 0.5             # a printed figure is exact to half a unit of its last digit
DECIMAL = 10.0
CHUNK_ROWS = 512            # meters ranked per block: 512 x 10,000 draws x 8 B = 40 MB

REPORTED, DERIVED, ESTIMATED = 0, 1, 2
STATUS = ("reported", "derived", "estimated")

# One Latin-hypercube column per kind of assumption; a slot holds one variable per disclosure.
SLOTS = ("tdp", "power_fraction", "pue", "grid_intensity", "embodied", "lifetime", "mfu")
SLOT_COLUMN = {s: i for i, s in enumerate(SLOTS)}

METER_UNITS = {
    "accelerator_hours": "h", "it_energy_kwh": "kWh", "facility_energy_kwh": "kWh",
    "co2e_location_kg": "kg", "co2e_market_kg": "kg", "co2e_embodied_kg": "kg", "cost_usd": "USD",
    "train_flops": "FLOP", "mfu": "fraction", "cost_usd_per_million_tokens": "USD/Mtok",
    "energy_j_per_token": "J/token", "co2e_g_per_million_tokens": "g/Mtok",
}

TEXT_KEYS = {
    "model": None, "source": None, "accelerator": None, "location": None,
    "power_basis": ("tdp", "measured", "system"), "energy_scope": ("it", "facility"),
    "facility_type": "pue.csv", "precision": "gpu_specs.csv",   # allowed values come from the reference data
}
# Numeric keys; True = may be zero (figures), False = must be positive (they divide).
NUMERIC_KEYS = {
    "params": False, "active_params": False, "tokens": False, "accelerator_count": False,
    "accelerator_hours": True, "training_days": False, "power_w": False, "pue": False,
    "grid_gco2e_per_kwh": True, "market_gco2e_per_kwh": True, "energy_mwh": True,
    "co2e_location_t": True, "co2e_market_t": True, "cost_usd": True,
    "price_usd_per_accelerator_hour": False,
}
# Without a disclosed precision, MFU uses the first dense peak the part has.
PRECISION_ORDER = ("bf16", "fp16", "tf32", "fp32")


class DisclosureError(ValueError):
    """A disclosure the engine cannot read: what, where, and how to fix it."""

    def __init__(self, what: str, where: str, fix: str) -> None:
        self.what, self.where, self.fix = what, where, fix
        super().__init__(f"{what} ({where}). {fix}" if where else f"{what}. {fix}")


# ---------------------------------------------------------------- uncertain quantities


_VAR_INDEX: dict[tuple, int] = {}
_VAR_KEYS: list[tuple] = []


def var_id(slot: str, comps: tuple) -> int:
    """Intern an assumption shape (slot, ((weight, low/central, high/central), ...)) as an int,
    so meters compare and hash their terms cheaply; equal shapes share one id (and one ranking)."""
    key = (slot, comps)
    vid = _VAR_INDEX.get(key)
    if vid is None:
        vid = _VAR_INDEX[key] = len(_VAR_KEYS)
        _VAR_KEYS.append(key)
    return vid


def _merge_terms(a: tuple, b: tuple, sign: int) -> tuple:
    if not b:
        return a
    if not a and sign == 1:
        return b
    terms = dict(a)
    for vid, e in b:
        e = terms.get(vid, 0) + sign * e
        if e:
            terms[vid] = e
        else:  # x / x: the assumption cancels (hours derived from energy, then energy again)
            del terms[vid]
    return tuple(sorted(terms.items()))


class Q:
    """central x product of (assumption / central)^exponent, with a rounding interval.

    ``terms`` is a sorted tuple of (var_id, exponent); a variable's components are
    (weight, low/central, high/central) and sum comonotonically (see ``__add__``).
    ``labels`` maps a slot to the coefficient ids of its components, for the tornado.
    Works with the estimators unchanged: they only multiply, divide and add.
    """

    __slots__ = ("value", "terms", "rlo", "rhi", "rank", "ids", "labels")

    def __init__(self, value: float, terms: tuple = (), rlo: float = 1.0, rhi: float = 1.0,
                 rank: int = DERIVED, ids: frozenset = frozenset(), labels: Mapping | None = None) -> None:
        self.value, self.terms, self.rlo, self.rhi = float(value), terms, rlo, rhi
        self.rank, self.ids, self.labels = rank, ids, labels or {}

    def _join(self, other: "Q", sign: int, value: float, rlo: float, rhi: float) -> "Q":
        labels = {**self.labels, **other.labels} if other.labels and self.labels else self.labels or other.labels
        return Q(value, _merge_terms(self.terms, other.terms, sign), rlo, rhi,
                 max(DERIVED, self.rank, other.rank), self.ids | other.ids, labels)

    def _scaled(self, factor: float) -> "Q":
        return Q(self.value * factor, self.terms, self.rlo, self.rhi, self.rank, self.ids, self.labels)

    def __mul__(self, other: "Q | float") -> "Q":
        if isinstance(other, Q):
            return self._join(other, 1, self.value * other.value, self.rlo * other.rlo, self.rhi * other.rhi)
        return self._scaled(float(other))

    __rmul__ = __mul__

    def __truediv__(self, other: "Q | float") -> "Q":
        if isinstance(other, Q):
            return self._join(other, -1, self.value / other.value, self.rlo / other.rhi, self.rhi / other.rlo)
        return self._scaled(1.0 / float(other))

    def __rtruediv__(self, other: float) -> "Q":
        inv = tuple((k, -e) for k, e in self.terms)
        return Q(float(other) / self.value, inv, 1.0 / self.rhi, 1.0 / self.rlo, self.rank, self.ids, self.labels)

    def __add__(self, other: "Q") -> "Q":
        """Sum of two figures of the same slot, e.g. GPU + host embodied carbon.

        The parts are taken as comonotonic (one uniform draw drives both): their ranges come
        from the same scope choices (silicon-only floor vs. full life-cycle ceiling), and
        perfect correlation is the conservative, widest choice for a sum.
        """
        total = self.value + other.value
        comps: list[tuple[float, float, float]] = []
        ids: list[str] = []
        slots = set()
        for q in (self, other):
            if not q.terms:
                comps.append((q.value / total, 1.0, 1.0))
                ids.append("")
                continue
            if len(q.terms) != 1 or q.terms[0][1] != 1:
                raise ValueError("only single-assumption figures can be added")
            slot, parts = _VAR_KEYS[q.terms[0][0]]
            slots.add(slot)
            comps += [(w * q.value / total, lo, hi) for w, lo, hi in parts]
            ids += list(q.labels[slot])
        if len(slots) != 1:
            raise ValueError("added figures must share one assumption slot")
        slot = slots.pop()
        comps, ids = _merge_components(comps, ids)
        rlo = (self.value * self.rlo + other.value * other.rlo) / total
        rhi = (self.value * self.rhi + other.value * other.rhi) / total
        return Q(total, ((var_id(slot, tuple(comps)), 1),), rlo, rhi, max(self.rank, other.rank),
                 self.ids | other.ids, {slot: tuple(ids)})


def _merge_components(comps: list[tuple[float, float, float]], ids: list[str]) -> tuple[tuple, list[str]]:
    """One component per reference row: a sum over GPU models shares the host server's row, and
    listing it twice would split its tornado bar in two (the same row is one draw anyway)."""
    merged: dict[str, list] = {}
    for (w, lo, hi), cid in zip(comps, ids):
        if cid in merged:
            merged[cid][0] += w
        else:
            merged[cid] = [w, lo, hi]
    return tuple((w, lo, hi) for w, lo, hi in merged.values()), list(merged)


def exact(value: float, rank: int = DERIVED, ids: Iterable[str] = ()) -> Q:
    return Q(value, rank=rank, ids=frozenset(ids))


def relative_precision(raw: str | float) -> float:
    """Half a unit of the last printed digit, relative to the figure: '14.8' -> 0.05/14.8,
    '1.1e9' -> 0.05e9/1.1e9, '400' -> 0.5/400, '400.0' -> 0.05/400, '3,311,616' -> 0.5/3311616.

    The one reading of printed precision: ``meterbook reconstruct`` and the audit both pass the
    number as written in the file. A bare number (a library caller's float) is read in its
    shortest form, never widened: 1.1e9 as a float is '1100000000', exact to the unit.
    """
    text = (raw if isinstance(raw, str) else number_as_text(raw)).strip().lower().replace(",", "").replace("_", "")
    x = float(text)
    if x == 0:
        return 0.0
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return HALF_UNIT * DECIMAL ** (int(exponent or 0) - decimals) / abs(x)


# ---------------------------------------------------------------- reference lookups


@lru_cache(maxsize=None)
def _coef_q(slot: str, cid: str, value: float, low: float, high: float) -> Q:
    # Cached: Q objects are never mutated, and the same reference rows recur across a batch.
    if low == high or value == 0:  # a datasheet figure (or a zero) has no spread to sample
        return Q(value, ids=frozenset({cid}))
    comps = ((1.0, low / value, high / value),)
    return Q(value, ((var_id(slot, comps), 1),), rank=ESTIMATED, ids=frozenset({cid}), labels={slot: (cid,)})


@lru_cache(maxsize=None)
def _assumption(assumption_id: str) -> dict:
    return rd.assumption(assumption_id)


@lru_cache(maxsize=4096)
def _resolve_gpu(name: str) -> str | None:
    return rd.resolve_gpu(name)


def _row_coef(name: str, row: Mapping[str, str]) -> dict:
    return {"value": float(row["value"]), "low": float(row["low"]), "high": float(row["high"]),
            "coefficient_id": rd.coefficient_id(name, dict(row))}


@lru_cache(maxsize=None)
def _specs() -> dict[tuple[str, str], dict]:
    return {(r["gpu_model"], r["metric"]): _row_coef("gpu_specs", r) for r in rd.read_rows("gpu_specs")}


@lru_cache(maxsize=None)
def _embodied() -> dict[tuple[str, str], dict]:
    return {(r["item"], r["kind"]): _row_coef("embodied", r) for r in rd.read_rows("embodied")}


@lru_cache(maxsize=None)
def coefficients_by_id() -> dict[str, dict]:
    """Every reference coefficient with a range, by coefficient id (as the warehouse's ref_* tables
    and the assumption ids of its rows name them)."""
    return {c["coefficient_id"]: c for name in ("gpu_specs", "assumptions", "pue", "grid_intensity", "embodied")
            for c in (_row_coef(name, r) for r in rd.read_rows(name))}


@lru_cache(maxsize=None)
def check_limits() -> dict[str, dict]:
    """Check limits (not coefficients) from sources/reference/check_limits.csv, by limit_id."""
    return {r["limit_id"]: {"value": float(r["value"]), "id": f"check_limits:{r['limit_id']}"}
            for r in rd.read_rows("check_limits")}


@lru_cache(maxsize=4096)
def resolve_pue(location: str | None, facility_type: str | None) -> tuple[dict, bool]:
    """PUE for a location: the cloud region's row, its provider glob, the provider fleet, then
    the facility type's row, else ``assumptions:pue_unknown``. Returns (coefficient, is_fallback)."""
    rows = rd.read_rows("pue")
    if location and ":" in location:
        provider, region = (p.strip().lower() for p in location.split(":", 1))
        for match in (lambda r: r["region"] == region,
                      lambda r: "*" in r["region"] and fnmatch.fnmatch(region, r["region"]),
                      lambda r: r["region"] == ""):
            hits = [r for r in rows if r["provider"] == provider and match(r)]
            if hits:
                return _row_coef("pue", hits[0]), False
    if not facility_type:  # assumptions.csv: pue_unknown when neither provider nor facility is known
        return _assumption("pue_unknown"), True
    row = next(r for r in rows if r["provider"] == "" and r["region"] == "" and r["facility_type"] == facility_type)
    return _row_coef("pue", row), facility_type == "unknown"


@lru_cache(maxsize=4096)
def resolve_grid(location: str | None) -> tuple[dict, bool]:
    """Location-based grid intensity; a missing or unknown location gives the wide, flagged
    ``assumptions:grid_intensity_unknown_location`` range instead of failing."""
    if location:
        g = rd.grid_intensity(location)
        if not g["fallback"]:
            return g, False
    return _assumption("grid_intensity_unknown_location"), True


# ---------------------------------------------------------------- disclosures


def normalize_disclosure(raw: Mapping[str, Any]) -> dict:
    """Validate a disclosure dict (design.md keys) and attach the precision of each number,
    read from its text under ``number_text`` (sources.disclosure_format.engine_input) when given."""
    if not isinstance(raw, Mapping):
        raise DisclosureError("a disclosure must be a mapping of keys to values", "", "Write one YAML mapping per document")
    known = set(TEXT_KEYS) | set(NUMERIC_KEYS)
    written = raw.get(NUMBER_TEXT) or {}
    d: dict[str, Any] = {"_eps": {}}
    for key, value in raw.items():
        if key == NUMBER_TEXT:
            continue
        if key not in known and not str(key).startswith(("x_", "notes")):
            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            fix = f"Did you mean '{close[0]}'?" if close else "See the disclosure format in design.md"
            raise DisclosureError(f"unknown key '{key}'", "", fix)
        if value is None or key not in known:
            continue
        if key in TEXT_KEYS:
            d[key] = _text(key, value)
        else:
            d[key], d["_eps"][key] = _number(key, value, written.get(key))
    for key in ("model", "source"):
        if not d.get(key):
            raise DisclosureError(f"missing '{key}'", str(raw.get("model") or ""), f"Every disclosure needs '{key}'")
    return d


@lru_cache(maxsize=None)
def allowed_values(key: str) -> tuple[str, ...] | None:
    """Values a text key may take; facility types and precisions as the reference files list them."""
    if key == "facility_type":
        return tuple(sorted({r["facility_type"] for r in rd.read_rows("pue") if r["facility_type"]}))
    if key == "precision":
        return tuple(sorted({r["metric"].removeprefix("peak_flops_") for r in rd.read_rows("gpu_specs")
                             if r["metric"].startswith("peak_flops_")}))
    return TEXT_KEYS[key]


def _text(key: str, value: Any) -> str:
    text = str(value).strip()
    allowed = allowed_values(key)
    if allowed is not None:
        text = text.lower()
        if text not in allowed:
            raise DisclosureError(f"{key} '{value}' is not one of {', '.join(allowed)}", key, "Use one of those or leave it empty")
    return text


def _number(key: str, value: Any, text: str | None = None) -> tuple[float, float]:
    """(value, relative rounding half-width); the precision comes from ``text`` (the number as
    written) when given, else from the value itself."""
    x = number(value) if isinstance(value, (str, int, float)) else None
    if x is None:
        raise DisclosureError(f"{key} '{value}' is not a number", key, "Write a plain number such as 1.4e+12")
    if x < 0 or (x == 0 and not NUMERIC_KEYS[key]):
        raise DisclosureError(f"{key} = {value} is out of range", key,
                              "Use a positive number" if not NUMERIC_KEYS[key] else "Use zero or a positive number")
    if text is not None and not math.isclose(number(text) or math.nan, x, rel_tol=1e-9):
        raise DisclosureError(f"{key} = {value} but its text is '{text}'", key,
                              "Give number_text as the same number as written")
    return x, relative_precision(value if text is None else text)


# ---------------------------------------------------------------- the meter graph


class _Graph:
    """Resolve one disclosure into meters: each a (Q, method), best status first.

    ``alt`` names a scope interpretation used by the consistency checks: ``no_pue``
    (energy and CO2e without PUE), ``tdp_power`` (TDP instead of the disclosed power),
    ``measured_power`` (TDP x power fraction instead of a TDP-basis figure).
    """

    def __init__(self, d: Mapping[str, Any], overrides: Mapping[str, dict], alt: str = "", full: bool = True) -> None:
        self.d, self.ov, self.alt, self.full = d, overrides, alt, full
        self.flags: list[dict] = []
        self.meters: dict[str, tuple[Q, str]] = {}
        self._inputs()
        self._meters()

    # -- inputs
    def rep(self, key: str, factor: float = 1.0) -> Q | None:
        if self.d.get(key) is None:
            return None
        eps = self.d["_eps"].get(key, 0.0)
        return Q(self.d[key] * factor, rlo=1.0 - eps, rhi=1.0 + eps, rank=REPORTED)

    def coef(self, slot: str, c: Mapping[str, Any]) -> Q:
        cid = c["coefficient_id"]
        o = self.ov.get(cid, self.ov.get(cid.split(":", 1)[1]))
        return _reference_coef(slot, {**(o or c), "coefficient_id": cid})

    def assume(self, slot: str, assumption_id: str) -> Q:
        return self.coef(slot, _assumption(assumption_id))

    def flag(self, flag: str, message: str, **extra: Any) -> None:
        self.flags.append({"flag": flag, "message": message, **extra})

    def _inputs(self) -> None:
        d = self.d
        self.gpu = _resolve_gpu(d["accelerator"]) if d.get("accelerator") else None
        if d.get("accelerator") and self.gpu is None:
            self.flag("accelerator_unresolved", f"accelerator '{d['accelerator']}' is not in gpu_aliases.csv; "
                      "power, embodied carbon and MFU that need its spec are left out")
        spec = _specs().get((self.gpu, "tdp_w"))
        self.tdp = self.coef("tdp", spec) if spec else None
        self.tdp_spec = spec
        self._power()
        self._site()
        self.price = self.rep("price_usd_per_accelerator_hour")
        params, self.tokens = self.rep("active_params") or self.rep("params"), self.rep("tokens")
        self.flops = None
        if params is not None and self.tokens is not None:
            self.flops = est.train_flops(params, self.tokens, self.assume("mfu", "train_flops_per_param_token"))
        self.precision = d.get("precision") or next(
            (p for p in PRECISION_ORDER if (self.gpu, f"peak_flops_{p}") in _specs()), None)
        peak = _specs().get((self.gpu, f"peak_flops_{self.precision}"))
        self.peak = self.coef("mfu", peak) if peak else None
        if self.gpu and d.get("precision") and peak is None:
            self.flag("precision_unavailable", f"gpu_specs.csv has no {d['precision']} peak for {self.gpu}: no MFU")
        scope = d.get("energy_scope") or "facility"
        energy = self.rep("energy_mwh", KWH_PER_MWH)
        if energy is not None and not d.get("energy_scope") and not self.alt:
            # Most published figures (Patterson et al., LLaMA) include PUE; the checks test the other reading.
            self.flag("energy_scope_assumed", "energy_scope not stated: energy_mwh is read as facility energy "
                      "(incl. PUE)")
        self.it_rep = energy if scope == "it" else None
        self.fac_rep = energy if scope == "facility" else None
        self.co2e_rep = self.rep("co2e_location_t", KG_PER_T)

    def _power(self) -> None:
        basis, reported = self.d.get("power_basis"), self.rep("power_w")
        fraction = "TDP x gpu_power_fraction_of_tdp (accelerator board only; host power not included)"
        if self.alt == "tdp_power" and self.tdp is not None:
            self.power, self.power_how = self.tdp, "TDP (interpretation: TDP instead of the disclosed power)"
        elif self.alt == "measured_power" and self.tdp is not None:
            self.power = est.power_w_from_tdp(self.tdp, self.assume("power_fraction", "gpu_power_fraction_of_tdp"))
            self.power_how = fraction + " (interpretation: measured instead of TDP)"
        elif reported is not None:
            self.power, self.power_how = reported, f"reported power per accelerator ({basis or 'basis not stated'})"
        elif basis == "tdp" and self.tdp is not None:
            self.power, self.power_how = self.tdp, "TDP of the accelerator (the disclosure's stated basis)"
        elif self.tdp is not None:
            self.power = est.power_w_from_tdp(self.tdp, self.assume("power_fraction", "gpu_power_fraction_of_tdp"))
            self.power_how = fraction
        else:
            self.power, self.power_how = None, ""

    def _site(self) -> None:
        d, location = self.d, self.d.get("location")
        if self.alt == "no_pue":
            self.pue, self.pue_how = exact(1.0), "no PUE (interpretation: IT energy only)"
        elif d.get("pue") is not None:
            self.pue, self.pue_how = self.rep("pue"), "reported PUE"
        else:
            row, generic = resolve_pue(location, d.get("facility_type"))
            self.pue, self.pue_how = self.coef("pue", row), f"PUE {row['coefficient_id']}"
            if generic:
                self.flag("pue_unknown", "no PUE, cloud region or facility type: the unknown-facility PUE range "
                          "applies", assumption=row["coefficient_id"])
        if d.get("grid_gco2e_per_kwh") is not None:
            self.grid, self.grid_how = self.rep("grid_gco2e_per_kwh"), "reported grid intensity"
        else:
            g, fallback = resolve_grid(location)
            self.grid, self.grid_how = self.coef("grid_intensity", g), f"grid intensity {g['coefficient_id']}"
            if fallback:
                self.flag("location_fallback", f"location '{location or ''}' does not resolve to a grid zone: the wide "
                          "world range applies", assumption=g["coefficient_id"])
        self.market = self.rep("market_gco2e_per_kwh")

    # -- meters
    def pick(self, name: str, candidates: list[tuple[Q | None, str]]) -> Q | None:
        """Keep the candidate with the best status (reported < derived < estimated), first on ties."""
        found = [(q.rank, i, q, how) for i, (q, how) in enumerate(candidates) if q is not None]
        if not found:
            return None
        _, _, q, how = min(found, key=lambda t: t[:2])
        self.meters[name] = (q, how)
        return q

    def _it_from_co2e(self) -> Q | None:
        if self.co2e_rep is None or self.grid.value <= 0:
            return None
        return est.it_energy_from_facility_kwh(est.energy_from_co2e_kwh(self.co2e_rep, self.grid), self.pue)

    def _hours(self) -> Q | None:
        power = self.power
        count, days = self.rep("accelerator_count"), self.rep("training_days")
        it_known = self.it_rep
        if it_known is None and self.fac_rep is not None:
            it_known = est.it_energy_from_facility_kwh(self.fac_rep, self.pue)
        if it_known is None:
            it_known = self._it_from_co2e()
        cost = self.rep("cost_usd")
        mfu = self.assume("mfu", "mfu_typical") if self.flops is not None and self.peak is not None else None
        return self.pick("accelerator_hours", [
            (self.rep("accelerator_hours"), "reported"),
            (est.accelerator_hours_from_days(count, days) if count and days else None,
             "accelerator_count x training_days x 24 h/d"),
            (est.accelerator_hours_from_it_energy(it_known, power) if it_known and power else None,
             f"IT energy from the reported figures / {self.power_how}"),
            (est.accelerator_hours_from_cost(cost, self.price) if cost and self.price else None,
             "reported cost / price per accelerator-hour"),
            (est.accelerator_hours_from_flops(self.flops, self.peak, mfu) if mfu else None,
             f"6 x params x tokens / ({self.precision} peak x mfu_typical)"),
        ])

    def _meters(self) -> None:
        hours, power, pue, grid = self._hours(), self.power, self.pue, self.grid
        forward = est.it_energy_kwh(hours, power) if hours and power else None
        it = self.pick("it_energy_kwh", [
            (self.it_rep, "reported energy (IT scope)"),
            (forward, f"accelerator_hours x {self.power_how}"),
            (est.it_energy_from_facility_kwh(self.fac_rep, pue) if self.fac_rep else None,
             f"reported facility energy / {self.pue_how}"),
            (self._it_from_co2e(), f"reported CO2e / {self.grid_how} / {self.pue_how}"),
        ])
        facility = self.pick("facility_energy_kwh", [
            (self.fac_rep, "reported energy (facility scope, incl. PUE)"),
            (est.facility_energy_kwh(it, pue) if it else None, f"IT energy x {self.pue_how}"),
            (est.energy_from_co2e_kwh(self.co2e_rep, grid) if self.co2e_rep and grid.value > 0 else None,
             f"reported CO2e / {self.grid_how}"),
        ])
        self.pick("co2e_location_kg", [
            (self.co2e_rep, "reported"),
            (est.co2e_kg(facility, grid) if facility else None, f"facility energy x {self.grid_how}"),
        ])
        self.pick("co2e_market_kg", [
            (self.rep("co2e_market_t", KG_PER_T), "reported"),
            (est.co2e_kg(facility, self.market) if facility and self.market else None,
             "facility energy x reported market-based factor"),
        ])
        if self.full:  # the consistency checks recompute only hours, energy, CO2e and cost
            self._embodied(hours)
        cost = self.pick("cost_usd", [
            (self.rep("cost_usd"), "reported"),
            (est.cost_usd(hours, self.price) if hours and self.price else None,
             "accelerator_hours x reported price per accelerator-hour"),
        ])
        if self.full:
            self._work(hours, facility, cost)

    def _embodied(self, hours: Q | None) -> None:
        if hours is None:
            return
        self.pick("co2e_embodied_kg", [(
            est.co2e_embodied_kg(hours, embodied_per_accelerator(self.gpu, self.coef),
                                 self.assume("lifetime", "hardware_lifetime_years")), EMBODIED_HOW)])

    def _work(self, hours: Q | None, facility: Q | None, cost: Q | None) -> None:
        if self.flops is None:
            return
        params_key = "active_params" if self.d.get("active_params") else "params"
        self.pick("train_flops", [(self.flops, f"train_flops_per_param_token x {params_key} x tokens")])
        if hours is not None and hours.value > 0 and self.peak is not None:
            self.pick("mfu", [(est.mfu(self.flops, hours, self.peak),
                               f"train_flops / (accelerator_hours x 3600 s/h x {self.precision} dense peak)")])
        tokens = self.tokens
        if cost is not None:
            self.pick("cost_usd_per_million_tokens", [(est.cost_usd_per_million_tokens(cost, tokens), "cost / tokens")])
        if facility is not None:
            self.pick("energy_j_per_token", [(est.energy_j_per_token(facility, tokens), "facility energy / tokens")])
        co2e = self.meters.get("co2e_location_kg")
        if co2e is not None:
            self.pick("co2e_g_per_million_tokens",
                      [(est.co2e_g_per_million_tokens(co2e[0], tokens), "location-based CO2e / tokens")])


# ---------------------------------------------------------------- plausibility and checks


@lru_cache(maxsize=1024)
def _per_accelerator(gpu: Q, host: Q, per_server: Q) -> Q:
    # Keyed by identity: _coef_q hands out one Q per reference row, so a batch builds each once.
    return est.embodied_kg_per_accelerator(gpu, host, per_server)


EMBODIED_HOW = "accelerator_hours x (GPU + host server / accelerators_per_server) embodied / hardware lifetime"


def _reference_coef(slot: str, c: Mapping[str, Any]) -> Q:
    return _coef_q(slot, c["coefficient_id"], c["value"], c["low"], c["high"])


def embodied_per_accelerator(gpu: str | None, coef: Callable[[str, Mapping[str, Any]], Q] = _reference_coef) -> Q:
    """Embodied kg per accelerator: the part's embodied.csv row (the unknown-GPU assumption for a
    part without one) plus its share of an 8-GPU host. ``coef`` turns a reference row into a Q
    (a disclosure's applies its assumption overrides)."""
    gpu_row = _embodied().get((gpu, "gpu")) or _assumption("gpu_embodied_kgco2e_unknown")
    host = coef("embodied", _embodied()[("8-gpu-hgx-server", "server")])
    return _per_accelerator(coef("embodied", gpu_row), host, coef("embodied", _assumption("accelerators_per_server")))


def embodied_for_hours(hours_by_gpu: Mapping[str | None, float]) -> tuple[Q, str]:
    """Embodied CO2e [kg] of accelerator-hours spread over GPU models (a team's month), and how.

    Per accelerator, the hours-weighted mean of each model's embodied figure; the models' rows
    move together (comonotonic, as for GPU + host), the widest and so the cautious reading.
    """
    total_h = sum(hours_by_gpu.values())
    shares = [(h / total_h) * embodied_per_accelerator(gpu) for gpu, h in sorted(hours_by_gpu.items(), key=str) if h > 0]
    per_accelerator = shares[0]
    for q in shares[1:]:
        per_accelerator = per_accelerator + q
    lifetime = _reference_coef("lifetime", _assumption("hardware_lifetime_years"))
    models = ", ".join(f"{gpu or 'unknown GPU'} {h:,.0f} h" for gpu, h in sorted(hours_by_gpu.items(), key=str) if h > 0)
    return est.co2e_embodied_kg(exact(total_h), per_accelerator, lifetime), f"{EMBODIED_HOW} ({models})"


def meter_with_range(q: Q, how: str, name: str, *, draws: int = 10_000, seed: int = 0) -> tuple[dict, list[dict]]:
    """One meter outside a disclosure (a team's month): its contract object and its tornado rows,
    from the same seeded draws as ``reconstruct``."""
    mc = MonteCarlo(draws, seed)
    return _meter_json(q, how, name, mc), tornado(q)


def tornado_of_parts(central: float, parts: Iterable[tuple[float, Iterable[str]]],
                     coefficients: Mapping[str, Mapping[str, float]]) -> list[dict]:
    """One-at-a-time sensitivity of a meter that sums parts, each a product of coefficients (a
    team's shares of energy lines, each its hours x TDP x power fraction x PUE x grid intensity).

    With coefficient c at its low, each part resting on c scales by low / value and the others
    stay: meter = central + (exposed part) x (low / value - 1). Rows as ``tornado`` gives them.
    """
    exposed: dict[str, float] = {}
    for amount, ids in parts:
        for cid in set(ids):
            exposed[cid] = exposed.get(cid, 0.0) + amount
    out = []
    for cid, amount in exposed.items():
        c = coefficients.get(cid)
        if c is None or c["low"] == c["high"] or c["value"] == 0 or amount == 0:
            continue
        out.append({"assumption": cid, "low": central + amount * (c["low"] / c["value"] - 1.0),
                    "high": central + amount * (c["high"] / c["value"] - 1.0)})
    return sorted(out, key=lambda r: (-abs(r["high"] - r["low"]), r["assumption"]))


def _plausibility(g: _Graph) -> list[dict]:
    """Flag implied values outside the check limits (sources/reference/check_limits.csv)."""
    lim, d, out = check_limits(), g.d, []

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


# (reported key, unit factor) -> meter it reports; energy follows the disclosure's scope.
CHECKED = (("accelerator_hours", 1.0), ("energy_mwh", KWH_PER_MWH), ("co2e_location_t", KG_PER_T),
           ("co2e_market_t", KG_PER_T), ("cost_usd", 1.0))


def _checked_meter(d: Mapping[str, Any], key: str) -> str:
    if key == "energy_mwh":
        return "it_energy_kwh" if d.get("energy_scope") == "it" else "facility_energy_kwh"
    return {"accelerator_hours": "accelerator_hours", "co2e_location_t": "co2e_location_kg",
            "co2e_market_t": "co2e_market_kg", "cost_usd": "cost_usd"}[key]


def _interpretations(d: Mapping[str, Any], key: str) -> list[tuple[str, str, str]]:
    """(alt, meter, text): scope differences that may explain a mismatch, most common first."""
    out: list[tuple[str, str, str]] = []
    stated = "" if d.get("energy_scope") else " (energy_scope not stated)"
    if key == "energy_mwh" and d.get("energy_scope") == "it":
        out.append(("", "facility_energy_kwh", "energy reported including PUE although stated as IT energy"))
    elif key == "energy_mwh":
        out.append(("no_pue", "facility_energy_kwh", f"energy reported without PUE (IT energy only){stated}"))
    if key == "co2e_location_t":
        out.append(("no_pue", "co2e_location_kg", "CO2e computed on IT energy, PUE not applied"))
    if key in ("energy_mwh", "co2e_location_t"):
        meter = _checked_meter(d, key)
        if d.get("power_basis") in ("measured", "system"):
            out.append(("tdp_power", meter, "energy computed at TDP rather than the disclosed measured power"))
        elif d.get("power_basis") == "tdp":
            out.append(("measured_power", meter, "energy at measured board power rather than the stated TDP"))
    return out


def _pending_checks(d: dict, overrides: Mapping[str, dict]) -> list[dict]:
    """For each reported meter: recompute it from the rest of the disclosure (and under each
    scope interpretation). Statuses are decided once the ranges are known."""
    pending = []
    for key, factor in CHECKED:
        if d.get(key) is None:
            continue
        hidden = {**d, key: None}
        meter = _checked_meter(d, key)
        main = _Graph(hidden, overrides, full=False).meters.get(meter)
        if main is None:
            continue
        alts = []
        for alt, alt_meter, text in _interpretations(d, key):
            q = _Graph(hidden, overrides, alt, full=False).meters.get(alt_meter)
            if q is not None:
                alts.append((text, q[0]))
        eps = d["_eps"].get(key, 0.0)
        reported = Q(d[key] * factor, rlo=1.0 - eps, rhi=1.0 + eps, rank=REPORTED)
        pending.append({"meter": meter, "reported": reported, "recomputed": main, "alternatives": alts})
    return pending


# ---------------------------------------------------------------- Monte Carlo


def pert_ppf(u: np.ndarray, low: float, mode: float, high: float) -> np.ndarray:
    """Inverse CDF of the PERT distribution over (low, mode, high) with lambda = 4."""
    if high <= low:
        return np.full_like(u, mode)
    alpha = 1.0 + PERT_LAMBDA * (mode - low) / (high - low)
    beta = 1.0 + PERT_LAMBDA * (high - mode) / (high - low)
    return low + (high - low) * betaincinv(alpha, beta, u)


# Nodes in probability for the tabulated PERT quantile function, denser in the tails (cosine
# spacing): betaincinv costs ~2 us a point, so 10,000 exact evaluations per assumption shape
# would dominate a batch. Interpolating 513 exact nodes stays within 3e-5 of the range width
# for u in [0.01, 0.99] and moves the 5th/95th percentiles by under 1e-5 of it (tested); only
# draws beyond the outermost nodes (u < 1e-5) see more, and they never set a percentile.
PPF_NODES = (1.0 - np.cos(np.linspace(0.0, np.pi, 513))) / 2.0


def pert_ppf_tabulated(u: np.ndarray, low: float, mode: float, high: float) -> np.ndarray:
    """``pert_ppf`` by linear interpolation between exact values at PPF_NODES."""
    if high <= low:
        return np.full_like(u, mode)
    return np.interp(u, PPF_NODES, pert_ppf(PPF_NODES, low, mode, high))


class MonteCarlo:
    """Seeded Latin-hypercube draws over the assumption slots, shared by a whole batch.

    ``ratios(terms)`` gives the 5th and 95th percentiles of a meter's ratio to its central
    value. Meters whose assumptions have the same normalized shapes share one ranking, so a
    batch costs one sort per distinct shape rather than one per disclosure.
    """

    def __init__(self, draws: int, seed: int) -> None:
        if draws < 1:
            raise ValueError("draws must be at least 1")
        sampler = qmc.LatinHypercube(d=len(SLOTS), rng=np.random.default_rng(seed))
        self.u = sampler.random(draws)
        self._k_low, self._k_high = (max(0, math.ceil(round(draws * p / PERCENT, 9)) - 1) for p in (P_LOW, P_HIGH))
        self._vars: dict[tuple, np.ndarray] = {}
        self._ratios: dict[tuple, tuple[float, float]] = {(): (1.0, 1.0)}

    def var(self, vid: int) -> np.ndarray:
        x = self._vars.get(vid)
        if x is None:
            slot, comps = _VAR_KEYS[vid]
            u = self.u[:, SLOT_COLUMN[slot]]
            x = sum(w * pert_ppf_tabulated(u, lo, 1.0, hi) for w, lo, hi in comps)
            self._vars[vid] = x
        return x

    def _sample(self, terms: tuple) -> np.ndarray:
        (vid, e), *rest = terms
        x = self.var(vid) if e == 1 else self.var(vid) ** e
        for vid, e in rest:
            x = x * self.var(vid) if e == 1 else x / self.var(vid) if e == -1 else x * self.var(vid) ** e
        return x

    def prepare(self, all_terms: Iterable[tuple]) -> None:
        """Rank every distinct shape not seen yet, in blocks of CHUNK_ROWS meters."""
        todo = [t for t in set(all_terms) if t not in self._ratios]
        for start in range(0, len(todo), CHUNK_ROWS):
            block = todo[start:start + CHUNK_ROWS]
            matrix = np.empty((len(block), len(self.u)))
            for row, terms in enumerate(block):
                matrix[row] = self._sample(terms)
            # A full row sort is ~2x faster here than np.percentile's two-pivot partition; the
            # indices are numpy's 'inverted_cdf' percentiles (the smallest x with F(x) >= p).
            matrix.sort(axis=1)
            lows, highs = matrix[:, self._k_low], matrix[:, self._k_high]
            self._ratios.update(zip(block, zip(lows.tolist(), highs.tolist())))

    def ratios(self, terms: tuple) -> tuple[float, float]:
        if terms not in self._ratios:
            self.prepare([terms])
        return self._ratios[terms]


def interval(q: Q, mc: MonteCarlo) -> tuple[float, float]:
    """(low, high): Monte Carlo 5th-95th percentiles x rounding interval, containing the central value."""
    lo, hi = mc.ratios(q.terms)
    return min(q.value, q.value * lo * q.rlo), max(q.value, q.value * hi * q.rhi)


def tornado(q: Q) -> list[dict]:
    """One-at-a-time sensitivity: the meter with each assumption at its low and at its high."""
    out = []
    for vid, e in q.terms:
        slot, comps = _VAR_KEYS[vid]
        for (w, lo, hi), cid in zip(comps, q.labels.get(slot, ())):
            if lo == hi:
                continue
            out.append({"assumption": cid, "low": q.value * (1.0 + w * (lo - 1.0)) ** e,
                        "high": q.value * (1.0 + w * (hi - 1.0)) ** e})
    return sorted(out, key=lambda r: -abs(r["high"] - r["low"]))


# ---------------------------------------------------------------- the engine API


def _build(raw: Mapping[str, Any], overrides: Mapping[str, dict]) -> dict:
    d = normalize_disclosure(raw)
    g = _Graph(d, overrides)
    return {"d": d, "graph": g, "checks": _pending_checks(d, overrides), "flags": g.flags + _plausibility(g)}


def _meter_json(q: Q, how: str, name: str, mc: MonteCarlo) -> dict:
    low, high = interval(q, mc)
    return {"value": q.value, "low": low, "high": high, "unit": METER_UNITS[name], "status": STATUS[q.rank],
            "method": how, "assumptions": sorted(q.ids)}


def _check_json(c: dict, mc: MonteCarlo) -> dict:
    reported, (rec, how) = c["reported"], c["recomputed"]
    low, high = interval(rec, mc)
    r_low, r_high = reported.value * reported.rlo, reported.value * reported.rhi

    def fits(lo: float, hi: float) -> bool:  # the reported figure, within its own rounding, meets the range
        return r_high >= lo and r_low <= hi

    status, interpretation = ("consistent", None) if fits(low, high) else ("inconsistent", None)
    if status == "inconsistent":
        for text, q in c["alternatives"]:
            a_low, a_high = interval(q, mc)
            if fits(a_low, a_high):
                status = "explained"
                interpretation = {"scope": text, "recomputed": q.value, "low": a_low, "high": a_high}
                break
    rel = est.relative_error(rec.value, reported.value) if reported.value else None
    rel = rel if rel is not None and math.isfinite(rel) else None  # a subnormal reported figure
    return {"meter": c["meter"], "reported": reported.value, "recomputed": rec.value, "low": low, "high": high,
            "relative_error": rel, "status": status, "interpretation": interpretation,
            "recomputed_status": STATUS[rec.rank], "method": how}


def _assemble(b: dict, mc: MonteCarlo) -> dict:
    meters = b["graph"].meters
    return {
        "model": b["d"]["model"], "source": b["d"]["source"],
        "meters": {n: _meter_json(q, how, n, mc) for n, (q, how) in meters.items()},
        "checks": [_check_json(c, mc) for c in b["checks"]],
        "sensitivity": {n: tornado(q) for n, (q, _) in meters.items() if q.terms},
        "flags": b["flags"],
    }


def parse_overrides(overrides: Mapping[str, Any] | None) -> dict[str, dict]:
    """{id: number | {value, low, high}} -> {id: {value, low, high}}; ids as in the reference
    files (``assumptions:pue_unknown`` or bare ``pue_unknown``, ``pue:aws::hyperscale``)."""
    out: dict[str, dict] = {}
    for key, spec in (overrides or {}).items():
        if isinstance(spec, Mapping):
            value = float(spec["value"])
            low, high = float(spec.get("low", value)), float(spec.get("high", value))
        else:
            value = low = high = float(spec)
        if not low <= value <= high:
            raise DisclosureError(f"override {key}: not low <= value <= high ({low}, {value}, {high})", str(key),
                                  "Give value, low and high in order")
        out[str(key)] = {"value": value, "low": low, "high": high}
    return out


def reconstruct_many(disclosures: Sequence[Mapping[str, Any]], *, draws: int = 10_000, seed: int = 0,
                     assumptions_override: Mapping | None = None) -> list[dict]:
    """Reconstruct a batch; the Monte Carlo ranking is shared (and deduplicated) across it."""
    overrides = parse_overrides(assumptions_override)
    built = [_build(d, overrides) for d in disclosures]
    mc = MonteCarlo(draws, seed)
    mc.prepare(q.terms for b in built for q in _all_q(b))
    return [_assemble(b, mc) for b in built]


def _all_q(b: dict) -> Iterable[Q]:
    for q, _ in b["graph"].meters.values():
        yield q
    for c in b["checks"]:
        yield c["recomputed"][0]
        yield from (q for _, q in c["alternatives"])


def reconstruct(disclosure: Mapping[str, Any], *, draws: int = 10_000, seed: int = 0,
                assumptions_override: Mapping | None = None) -> dict:
    """One disclosure (design.md YAML keys) -> one ``reconstruct --json`` object."""
    return reconstruct_many([disclosure], draws=draws, seed=seed, assumptions_override=assumptions_override)[0]
