"""Invariants of the reconstruction engine over generated disclosures (hypothesis)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.units import KG_PER_T, PERCENT
from pipelines.reconstruct import reconstruct, reconstruct_many
from pipelines.reconstruct.sampling import P_HIGH, P_LOW, pert_ppf, relative_precision, spanning

DRAWS = 300
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

positive = st.floats(min_value=1e-3, max_value=1e7, allow_nan=False, allow_infinity=False)
accelerators = st.sampled_from(["A100-80GB", "H100", "V100", "TPU v3", "T4", "MI300X", "H800", "not-a-gpu"])
locations = st.sampled_from(["FR", "US", "US-CA", "aws:us-east-1", "aws:us-east", "gcp:europe-west4", "azure:eastus",
                             "XX", None])

# Every optional field may be present or absent; values are arbitrary but valid.
disclosures = st.fixed_dictionaries(
    {"model": st.just("generated"), "source": st.just("hypothesis")},
    optional={
        "params": st.floats(1e6, 2e12), "tokens": st.floats(1e9, 2e13), "accelerator": accelerators,
        "accelerator_count": st.integers(1, 30_000), "accelerator_hours": positive, "training_days": st.floats(0.1, 400),
        "power_w": st.floats(10, 1500), "power_basis": st.sampled_from(["tdp", "measured", "system"]),
        "pue": st.floats(1.0, 2.5), "energy_scope": st.sampled_from(["it", "facility"]), "location": locations,
        "facility_type": st.sampled_from(["hyperscale", "hpc", "enterprise"]),
        "grid_gco2e_per_kwh": st.floats(0, 1200), "market_gco2e_per_kwh": st.floats(0, 800),
        "energy_mwh": st.floats(0, 1e5), "co2e_location_t": st.floats(0, 1e5), "cost_usd": st.floats(0, 1e9),
        "price_usd_per_accelerator_hour": st.floats(0.1, 20),
        "convention": st.sampled_from(["mlco2-impact", "codecarbon"]), "operator": st.sampled_from(["google", "microsoft"]),
        "year": st.integers(2015, 2026),
    },
)


@SETTINGS
@given(disclosures)
def test_every_meter_and_check_range_contains_its_value(d):
    result = reconstruct(d, draws=DRAWS)
    for name, m in result["meters"].items():
        assert m["low"] <= m["value"] <= m["high"], (name, m)
        assert m["low"] >= 0
    for c in result["checks"]:
        assert c["low"] <= c["recomputed"] <= c["high"], c
    for entries in result["sensitivity"].values():
        assert all(e["low"] >= 0 and e["high"] >= 0 for e in entries)


base = {"model": "m", "source": "s", "accelerator": "A100-80GB", "accelerator_hours": 50_000.0}


@SETTINGS
@given(st.floats(0, 1200), st.floats(0, 1200), locations, st.sampled_from([None, 1.1, 1.5]))
def test_co2e_rises_with_grid_intensity(g1, g2, location, pue):
    low_g, high_g = sorted((g1, g2))
    extra = {"location": location, "pue": pue}
    a, b = reconstruct_many([{**base, **extra, "grid_gco2e_per_kwh": low_g},
                             {**base, **extra, "grid_gco2e_per_kwh": high_g}], draws=DRAWS)
    ma, mb = a["meters"]["co2e_location_kg"], b["meters"]["co2e_location_kg"]
    assert ma["value"] <= mb["value"]
    # A stated figure is exact to its printed precision: 95 may be 94.5-95.5, 94.75 only
    # 94.745-94.755, so 95's low may lie under 94.75's. The ends of the range follow the ends
    # of those intervals (the draws are shared; the interval is the only other difference).
    lo_a, lo_b = (g - g * relative_precision(g) for g in (low_g, high_g))
    hi_a, hi_b = (g + g * relative_precision(g) for g in (low_g, high_g))
    if lo_a <= lo_b:
        assert ma["low"] <= mb["low"] * (1 + 1e-12), (lo_a, lo_b, ma, mb)
    if hi_a <= hi_b:
        assert ma["high"] <= mb["high"] * (1 + 1e-12), (hi_a, hi_b, ma, mb)


def test_a_less_precise_figure_has_the_wider_range():
    """The case hypothesis once found: 95 (exact to the unit) against 94.75 (to the hundredth)."""
    a, b = reconstruct_many([{**base, "location": "FR", "grid_gco2e_per_kwh": g} for g in (94.75, 95.0)], draws=DRAWS)
    ma, mb = a["meters"]["co2e_location_kg"], b["meters"]["co2e_location_kg"]
    assert ma["value"] < mb["value"] and mb["low"] < ma["low"] and ma["high"] < mb["high"]
    assert mb["low"] / ma["low"] == pytest.approx(94.5 / 94.745, rel=1e-9)


@SETTINGS
@given(st.floats(0, 1200), st.floats(0, 800), st.sampled_from(["it", "facility", None]), locations)
def test_zero_energy_gives_zero_operational_co2e(grid, market, scope, location):
    d = {"model": "m", "source": "s", "energy_mwh": 0, "grid_gco2e_per_kwh": grid,
         "market_gco2e_per_kwh": market, "energy_scope": scope, "location": location}
    meters = reconstruct(d, draws=DRAWS)["meters"]
    for name in ("co2e_location_kg", "co2e_market_kg"):
        assert (meters[name]["value"], meters[name]["low"], meters[name]["high"]) == (0, 0, 0)


@settings(max_examples=20, deadline=None)
@given(disclosures, st.integers(0, 2**32 - 1))
def test_seeded_runs_are_reproducible(d, seed):
    assert reconstruct(d, draws=DRAWS, seed=seed) == reconstruct(d, draws=DRAWS, seed=seed)


def test_different_seeds_change_only_the_ranges():
    d = {**base, "location": "XX"}
    a, b = (reconstruct(d, draws=DRAWS, seed=s)["meters"]["co2e_location_kg"] for s in (1, 2))
    assert a["value"] == b["value"] and (a["low"], a["high"]) != (b["low"], b["high"])


def test_a_route_that_overflows_gives_no_figure():
    """Found by hypothesis: CO2e over a grid intensity of 1e-308 g/kWh overflowed to infinite
    energy, and infinity x a market factor of 0 made the market-based CO2e NaN."""
    d = {"model": "m", "source": "s", "grid_gco2e_per_kwh": 1.1125369292536007e-308, "market_gco2e_per_kwh": 0.0,
         "co2e_location_t": 1.0, "tokens": 1e9}
    meters = reconstruct(d, draws=DRAWS)["meters"]
    assert all(math.isfinite(m[k]) for m in meters.values() for k in ("value", "low", "high")), meters
    assert "facility_energy_kwh" not in meters and "co2e_market_kg" not in meters
    assert meters["co2e_location_kg"]["value"] == d["co2e_location_t"] * KG_PER_T


@given(st.lists(st.floats(0.01, 2000), min_size=1, max_size=5))
@example([27.0, 1146.0])   # found by hypothesis: past 40x, yet the 5th percentile is the least to 1e-15
@settings(max_examples=100, deadline=None)
def test_a_range_spanning_alternative_readings_reaches_each_at_its_5th_and_95th_percentile(readings):
    # sampling.spanning: every reading the disclosure leaves possible lies inside the printed 5-95 % range
    low, mode, high = spanning(readings)
    p5, p95 = pert_ppf(np.array([P_LOW, P_HIGH]) / PERCENT, low, mode, high)
    assert 0 <= low <= mode <= high and low <= min(readings) and max(readings) <= high
    assert p95 == pytest.approx(max(readings), rel=1e-6)
    if max(readings) <= 40 * min(readings):   # within reach of a PERT from zero: the readings are its percentiles
        assert p5 == pytest.approx(min(readings), rel=1e-6)
    else:                                     # the least lies between zero and the 5th percentile
        # (or on it, to the float's rounding: past 40x a PERT may still reach the least exactly)
        assert min(readings) <= p5 or p5 == pytest.approx(min(readings), rel=1e-9)
