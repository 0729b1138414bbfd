"""Reconstruct missing meters of a published model footprint, with ranges and sensitivity.

``reconstruct(disclosure)`` returns one object of the ``reconstruct --json`` contract
(design.md); ``reconstruct_many`` does a batch and shares the Monte Carlo work across it.

The engine in four modules, this one holding the API and the disclosure's normalisation:
- pipelines/reconstruct/sampling.py: uncertain quantities, rounding intervals, Monte Carlo;
- pipelines/reconstruct/reference.py: which reference row (operator, year, convention) applies;
- pipelines/reconstruct/graph.py: the meter graph of one disclosure;
- pipelines/reconstruct/checks.py: consistency checks and their three-level verdicts.
The disclosure format is validated once, by sources/disclosure_format.document_problems.

Besides the contract's keys each result carries ``run`` (seed, draws, reference-data sha256),
``assumptions`` (every coefficient used: id, value, low, high, unit, source) and ``findings``
(the parser's plausibility findings, e.g. a kg value in a card's grams field).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from core.vocabulary import METER_UNITS
from pipelines.reconstruct import reference as ref
from pipelines.reconstruct.checks import check_json, mfu_check, pending_checks, plausibility
from pipelines.reconstruct.graph import (  # noqa: F401 (API)
    Graph,
    embodied_for_hours,
    embodied_per_accelerator,
    reference_coef,
)
from pipelines.reconstruct.reference import check_limits, coefficients_by_id, resolve_gpu  # noqa: F401 (API)
from pipelines.reconstruct.sampling import (  # noqa: F401 (API: the percentiles and PERT shape reports state)
    P_HIGH,
    P_LOW,
    PERT_LAMBDA,
    STATUS,
    MonteCarlo,
    Q,
    extremes,
    interval,
    relative_precision,
    tornado,
)
from sources.disclosure_format import (
    FREE_KEY_PREFIXES,
    MEASURED_BY,
    NUMBER_TEXT,
    NUMERIC_FIELDS,
    DisclosureError,
    document_problems,
    number,
)

# Figures a disclosure needs at least one of for any meter to be reconstructed.
FINDINGS = "findings"   # a parser's plausibility findings ride along with the disclosure, not validated
USABLE = ("accelerator_hours", "accelerator_count", "energy_mwh", "co2e_location_t", "co2e_market_t", "cost_usd",
          "params", "tokens")
NOTHING_USABLE_FIX = ("Add accelerator_hours (or accelerator_count and training_days) with the accelerator, "
                      "or energy_mwh, co2e_location_t, or params and tokens")


def normalize_disclosure(raw: Mapping[str, Any]) -> dict:
    """Validate a disclosure dict (design.md keys) and attach the precision of each number,
    read from its text under ``number_text`` (sources.disclosure_format.engine_input) when given."""
    if not isinstance(raw, Mapping):
        raise DisclosureError("a disclosure must be a mapping of keys to values", "", "Write one YAML mapping per document")
    doc = {k: v for k, v in raw.items() if k not in (NUMBER_TEXT, FINDINGS)}
    problems = document_problems(doc)
    if problems:
        p = problems[0]
        where = "" if p.check == "known_key" else str(raw.get("model") or "") if p.check == "not_nullable" else p.column
        raise DisclosureError(p.message, where or "", p.fix)
    written = raw.get(NUMBER_TEXT) or {}
    d: dict[str, Any] = {"_eps": {}}
    for key, value in doc.items():
        if value is None or (str(key).startswith(FREE_KEY_PREFIXES) and key != MEASURED_BY):
            continue
        if key in NUMERIC_FIELDS:
            d[key], d["_eps"][key] = _number(key, value, written.get(key))
        else:
            text = str(value).strip()
            d[key] = text.lower() if key in ("power_basis", "energy_scope", "facility_type", "precision", "operator",
                                             "convention") else text
    return d


def _number(key: str, value: Any, text: str | None) -> tuple[float, float]:
    """(value, relative rounding half-width) from the number as written (``text``) when given."""
    x = number(value)
    assert x is not None   # document_problems has checked that every number field parses
    if text is not None and not abs((number(text) or float("nan")) - x) <= 1e-9 * abs(x):
        raise DisclosureError(f"{key} = {value} but its text is '{text}'", key,
                              "Give number_text as the same number as written")
    return x, relative_precision(value if text is None else text)


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


def nothing_usable(d: Mapping[str, Any]) -> bool:
    """True when no figure the engine can start from is present (a template card)."""
    return not any(d.get(k) is not None for k in USABLE)


# ---------------------------------------------------------------- assembly


def _build(raw: Mapping[str, Any], overrides: Mapping[str, dict]) -> dict:
    d = normalize_disclosure(raw)
    g = Graph(d, overrides)
    mfu = mfu_check(g)
    return {"d": d, "graph": g, "checks": pending_checks(g), "mfu_check": mfu,
            "flags": g.flags + plausibility(g), "findings": list(raw.get(FINDINGS) or [])}


def _meter_json(q: Q, how: str, name: str, mc: MonteCarlo) -> dict:
    """low/high: the Monte Carlo's 5th-95th percentiles (what `reconstruct` prints and its checks
    test against); bound_low/bound_high: the interval bounds, the range every report prints."""
    low, high = interval(q, mc)
    bound_low, bound_high = extremes(q)
    return {"value": q.value, "low": low, "high": high, "bound_low": bound_low, "bound_high": bound_high,
            "unit": METER_UNITS[name], "status": STATUS[q.rank], "method": how, "assumptions": sorted(q.ids)}


def _assemble(b: dict, mc: MonteCarlo, run: dict) -> dict:
    g = b["graph"]
    meters = g.meters
    ids = {i for q, _ in meters.values() for i in q.ids}
    used = {**{k: v for c in b["checks"] for k, v in c["graph"].used.items()}, **g.used}
    checks = [check_json(c, mc) for c in b["checks"]] + ([b["mfu_check"]] if b["mfu_check"] else [])
    return {
        "model": b["d"]["model"], "source": b["d"]["source"],
        "meters": {n: _meter_json(q, how, n, mc) for n, (q, how) in meters.items()},
        "checks": checks,
        "sensitivity": {n: tornado(q) for n, (q, _) in meters.items() if q.terms},
        "flags": b["flags"],
        "findings": b["findings"],
        "assumptions": [_described(*used[i]) for i in sorted(ids) if i in used],
        "operator": g.operator, "year": g.year,
        "run": run,
    }


def _described(c: Mapping[str, Any], override: Mapping[str, Any] | None) -> dict:
    if override:
        return ref.describe({**c, **override, "coefficient_id": c["coefficient_id"], "source": "assumption override"})
    return ref.describe(c)


# The one Monte Carlo setting of every range meterbook prints (disclosures, teams, totals).
DRAWS, SEED = 10_000, 0


@lru_cache(maxsize=4)
def monte_carlo(draws: int = DRAWS, seed: int = SEED) -> MonteCarlo:
    """The seeded draws shared by everything outside a disclosure batch (a month's teams and totals)."""
    return MonteCarlo(draws, seed)


def reconstruct_many(disclosures: Sequence[Mapping[str, Any]], *, draws: int = DRAWS, seed: int = SEED,
                     assumptions_override: Mapping | None = None) -> list[dict]:
    """Reconstruct a batch; the Monte Carlo ranking is shared (and deduplicated) across it."""
    overrides = parse_overrides(assumptions_override)
    built = [_build(d, overrides) for d in disclosures]
    mc = MonteCarlo(draws, seed)
    mc.prepare(q.terms for b in built for q in _all_q(b))
    run = {"seed": seed, "draws": draws, "reference_sha256": ref.reference_sha256()}
    return [_assemble(b, mc, run) for b in built]


def _all_q(b: dict) -> Iterable[Q]:
    for q, _ in b["graph"].meters.values():
        yield q
    for c in b["checks"]:
        yield c["recomputed"][0]
        yield from (q for _, q in c["alternatives"])


def reconstruct(disclosure: Mapping[str, Any], *, draws: int = DRAWS, seed: int = SEED,
                assumptions_override: Mapping | None = None) -> dict:
    """One disclosure (design.md YAML keys) -> one ``reconstruct --json`` object."""
    return reconstruct_many([disclosure], draws=draws, seed=seed, assumptions_override=assumptions_override)[0]


# ---------------------------------------------------------------- meters outside a disclosure (team footprints)


def meter_with_range(q: Q, how: str, name: str, *, draws: int = DRAWS, seed: int = SEED) -> tuple[dict, list[dict]]:
    """One meter outside a disclosure (a team's month): its contract object and its tornado rows,
    from the same seeded draws as ``reconstruct``."""
    return _meter_json(q, how, name, monte_carlo(draws, seed)), tornado(q)


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
