"""Amounts as CSV text: money in its currency's minor unit, plain notation, never `0E-12`.

Exact values stay in Parquet and in the warehouse (DECIMAL(38, 12)); a CSV is read by people
and spreadsheets, so it carries what an invoice would print. Minor units per currency come from
core/currency_minor_units.csv (ISO 4217). A currency the file does not know keeps its exact
value, trailing zeros dropped: rounding it to a guessed unit would invent precision or lose it.
"""
from __future__ import annotations

import csv
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from core.sql import literal

MINOR_UNITS_FILE = Path(__file__).resolve().parent / "currency_minor_units.csv"


@lru_cache(maxsize=1)
def minor_units() -> dict[str, int]:
    """ISO 4217 code -> decimal places of its minor unit (USD 2, JPY 0, KWD 3)."""
    with open(MINOR_UNITS_FILE, newline="", encoding="utf-8") as fh:
        return {r["currency"]: int(r["minor_unit"]) for r in csv.DictReader(fh)}


def plain(value: Decimal, places: int | None = None) -> str:
    """A decimal in fixed notation: rounded half-even to `places`, else exact without trailing zeros."""
    value = value.quantize(Decimal(1).scaleb(-places)) if places is not None else value.normalize()
    return format(abs(value) if value.is_zero() else value, "f")   # never "-0.00"


def money_text(value: Decimal, currency: str | None) -> str:
    """Money as its currency prints it: USD 12.3400000000 -> 12.34, JPY 1234.5 -> 1234 (half-even: 1234)."""
    return plain(value, minor_units().get(currency or ""))


def amount_sql(amount: str, places: dict[str, int], key: str) -> str:
    """SQL turning DECIMAL `amount` into CSV text rounded to places[<value of key>]; other keys
    keep the exact value, trailing zeros dropped. DuckDB's round() needs its places as a constant
    to keep a DECIMAL, hence one branch per distinct number of places."""
    branches = []
    for n in sorted(set(places.values())):
        keys = ", ".join(literal(k) for k, v in places.items() if v == n)
        branches.append(f"when {key} in ({keys}) then round({amount}, {n})::varchar")
    return f"case {' '.join(branches)} else {exact_sql(amount)} end"


def exact_sql(decimal: str) -> str:
    """SQL: a DECIMAL as plain text without trailing zeros (32.772600000000 -> 32.7726, 0E-12 -> 0)."""
    return f"rtrim(rtrim({decimal}::varchar, '0'), '.')"
