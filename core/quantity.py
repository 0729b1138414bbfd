"""A tiny unit-checked quantity: a value with its dimensions, so that a per-unit figure cannot
come out a thousand times off without a test noticing. Dimensions are base units with integer
powers (kg, kWh, token, request, run); scaled units (g, t, Wh, MWh, million tokens, thousand
requests) are the base unit times a factor from core.units. Adding or comparing quantities of
different dimensions raises; `to` converts only between units of the same dimensions."""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from core.units import G_PER_KG, KG_PER_T, KWH_PER_MWH, TOKENS_PER_MILLION, UNITS_PER_THOUSAND, WH_PER_KWH

Dims = tuple[tuple[str, int], ...]

# unit name -> (factor to the base unit, base unit)
UNITS = MappingProxyType({
    "kg": (1.0, "kg"), "g": (1.0 / G_PER_KG, "kg"), "t": (KG_PER_T, "kg"),
    "kWh": (1.0, "kWh"), "Wh": (1.0 / WH_PER_KWH, "kWh"), "MWh": (KWH_PER_MWH, "kWh"),
    "token": (1.0, "token"), "Mtok": (TOKENS_PER_MILLION, "token"),
    "request": (1.0, "request"), "krequest": (UNITS_PER_THOUSAND, "request"),
    "sample": (1.0, "sample"), "ksample": (UNITS_PER_THOUSAND, "sample"),
    "run": (1.0, "run"), "FLOP": (1.0, "FLOP"), "h": (1.0, "h"),
})


class UnitError(ValueError):
    """Quantities of different dimensions met where one dimension was needed."""


def parse(unit: str) -> tuple[float, Dims]:
    """'g/Mtok', 'kg/kWh', 'kg*kWh/run' -> (factor to base units, base dimensions)."""
    factor, powers = 1.0, dict[str, int]()
    num, _, den = unit.partition("/")
    for sign, part in ((1, num), (-1, den)):
        for name in filter(None, part.split("*")):
            if name == "1":
                continue
            f, base = UNITS[name]
            factor *= f ** sign
            powers[base] = powers.get(base, 0) + sign
    return factor, tuple(sorted((b, p) for b, p in powers.items() if p))


@dataclass(frozen=True)
class Q:
    """A value in base units with its dimensions. Build with Q.of(6500, 'kg')."""
    base: float
    dims: Dims

    @staticmethod
    def of(value: float, unit: str) -> Q:
        factor, dims = parse(unit)
        return Q(value * factor, dims)

    def to(self, unit: str) -> float:
        factor, dims = parse(unit)
        if dims != self.dims:
            raise UnitError(f"cannot express {_show(self.dims)} in {unit}")
        return self.base / factor

    def __add__(self, other: Q) -> Q:
        if other.dims != self.dims:
            raise UnitError(f"cannot add {_show(other.dims)} to {_show(self.dims)}")
        return Q(self.base + other.base, self.dims)

    def __mul__(self, other: Q) -> Q:
        return Q(self.base * other.base, _combine(self.dims, other.dims, 1))

    def __truediv__(self, other: Q) -> Q:
        if other.base == 0:
            raise ZeroDivisionError("per-unit figure over zero units")
        return Q(self.base / other.base, _combine(self.dims, other.dims, -1))


def _combine(a: Dims, b: Dims, sign: int) -> Dims:
    powers = dict(a)
    for base, p in b:
        powers[base] = powers.get(base, 0) + sign * p
    return tuple(sorted((k, v) for k, v in powers.items() if v))


def _show(dims: Dims) -> str:
    return "*".join(f"{b}^{p}" if p != 1 else b for b, p in dims) or "a number"
