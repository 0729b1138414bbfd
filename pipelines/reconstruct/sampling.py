"""Sampling and ranges of the reconstruction engine: uncertain quantities and their Monte Carlo.

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
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaincinv
from scipy.stats import qmc

from core.units import PERCENT
from sources.disclosure_format import number_as_text

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


_NO_LABELS: Mapping = {}   # shared by every Q without assumptions; labels are never mutated


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
        self.rank, self.ids, self.labels = rank, ids, labels or _NO_LABELS

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
        merged, merged_ids = _merge_components(comps, ids)
        rlo = (self.value * self.rlo + other.value * other.rlo) / total
        rhi = (self.value * self.rhi + other.value * other.rhi) / total
        return Q(total, ((var_id(slot, merged), 1),), rlo, rhi, max(self.rank, other.rank),
                 self.ids | other.ids, {slot: tuple(merged_ids)})


def _merge_components(comps: list[tuple[float, float, float]],
                      ids: list[str]) -> tuple[tuple[tuple[float, float, float], ...], list[str]]:
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


# ---------------------------------------------------------------- Monte Carlo


def pert_ppf(u: np.ndarray, low: float, mode: float, high: float) -> np.ndarray:
    """Inverse CDF of the PERT distribution over (low, mode, high) with lambda = 4."""
    if high <= low:
        return np.full_like(u, mode)
    alpha = 1.0 + PERT_LAMBDA * (mode - low) / (high - low)
    beta = 1.0 + PERT_LAMBDA * (high - mode) / (high - low)
    return low + (high - low) * betaincinv(alpha, beta, u)


def spanning(values: Iterable[float]) -> tuple[float, float, float]:
    """(low, mode, high) of a PERT whose 5th and 95th percentiles are the least and the greatest
    of ``values``: alternative readings none of which the disclosure rules out (the regions a
    name may mean, a figure with or without PUE) all lie inside the meter's printed range.

    The mode is their midpoint (a symmetric PERT) unless that range would reach below zero (readings
    over ~4x apart): then it starts at zero and the mode moves left until the percentiles are the
    readings again. Readings over ~44x apart cannot both be percentiles of a PERT from zero: the
    smallest then lies between zero and the 5th percentile, inside the stated range."""
    xs = sorted(values)
    least, most = xs[0], xs[-1]
    mid, half = (least + most) / 2.0, (most - least) / 2.0
    inner = _pert_quantile(0.5, P_LOW)   # a symmetric PERT's 5th percentile on [0, 1]
    reach = half / (1.0 - 2.0 * inner)
    if mid - reach >= 0.0:
        return mid - reach, mid, mid + reach

    def spread(r: float) -> float:   # p95 / p5 of a PERT from zero whose mode sits at r of its width
        return _pert_quantile(r, P_HIGH) - (most / least) * _pert_quantile(r, P_LOW) if least > 0 else 1.0

    r = brentq(spread, TINY_MODE, 0.5) if least > 0 and spread(TINY_MODE) > 0 else TINY_MODE
    high = most / _pert_quantile(r, P_HIGH)
    return 0.0, r * high, high


TINY_MODE = 1e-9   # the least mode position (a fraction of the width) spanning searches


def _pert_quantile(r: float, percent: float) -> float:
    """The ``percent`` quantile of a PERT on [0, 1] whose mode is at ``r``."""
    return float(betaincinv(1.0 + PERT_LAMBDA * r, 1.0 + PERT_LAMBDA * (1.0 - r), percent / PERCENT))


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
        self._vars: dict[int, np.ndarray] = {}
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
            # float32: the percentiles of ratios near 1 need 1e-7, not 1e-16, and the sort is twice as fast
            matrix = np.empty((len(block), len(self.u)), dtype=np.float32)
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


def extremes(q: Q) -> tuple[float, float]:
    """(low, high) with every assumption at the end of its stated range that moves the figure
    furthest, and the rounding at its worst: no reading within the stated ranges lies outside.
    A figure beyond these disagrees with the disclosure itself, not only with its likely readings."""
    lo = hi = 1.0
    for vid, e in q.terms:
        _, comps = _VAR_KEYS[vid]
        ends = (sum(w * c_lo for w, c_lo, _ in comps) ** e, sum(w * c_hi for w, _, c_hi in comps) ** e)
        lo, hi = lo * min(ends), hi * max(ends)
    return min(q.value, q.value * lo * q.rlo), max(q.value, q.value * hi * q.rhi)


def sum_interval(parts: Iterable[Q], mc: MonteCarlo) -> tuple[float, float]:
    """(low, high) of a sum of figures (a team's energy lines, an organisation's teams): the
    5th-95th percentiles of the summed draws, each part drawn from the same Latin hypercube, so
    parts resting on one reference row move together. The rounding interval widens each end as
    ``interval`` does. Not the sum of the parts' own ranges, which would overstate the spread."""
    parts = [q for q in parts if q.value]
    central = sum(q.value for q in parts)
    if not any(q.terms for q in parts):
        return (sum(q.value * q.rlo for q in parts) if parts else 0.0), (sum(q.value * q.rhi for q in parts) if parts else 0.0)
    draws = np.zeros(len(mc.u))
    widen_lo = widen_hi = 0.0
    for q in parts:
        draws += q.value * (mc._sample(q.terms) if q.terms else 1.0)
        widen_lo += q.value * (1.0 - q.rlo)
        widen_hi += q.value * (q.rhi - 1.0)
    draws.sort()
    return min(central, float(draws[mc._k_low]) - widen_lo), max(central, float(draws[mc._k_high]) + widen_hi)


def bounds(q: Q) -> tuple[float, float]:
    """(low, high) by interval arithmetic: every assumption at the end of its stated range that
    lowers the figure, then every one at the end that raises it, times the rounding interval.
    The range the build gives every figure of a month (team_month's *_low/_high): it holds
    whenever each assumption lies in its stated range, whatever their joint distribution, and
    the bounds of a sum are the sums of its parts' bounds."""
    lo = hi = 1.0
    for vid, e in q.terms:
        comps = _VAR_KEYS[vid][1]
        ends = (sum(w * c_lo for w, c_lo, _ in comps) ** e, sum(w * c_hi for w, _, c_hi in comps) ** e)
        lo, hi = lo * min(ends), hi * max(ends)
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

