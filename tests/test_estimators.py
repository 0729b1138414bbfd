"""The meter graph's pure estimators, the uncertain-quantity algebra and the sampler."""
from __future__ import annotations

import numpy as np
import pytest

from pipelines import estimators as est
from pipelines.reconstruct.sampling import (
    DERIVED,
    ESTIMATED,
    MonteCarlo,
    Q,
    interval,
    pert_ppf,
    pert_ppf_tabulated,
    relative_precision,
    tornado,
    var_id,
)

# ---------------------------------------------------------------- estimators, both directions


def test_hours_from_count_and_days_and_back():
    hours = est.accelerator_hours_from_days(2048, 21.0)
    assert hours == pytest.approx(1_032_192)
    assert est.training_days_from_hours(hours, 2048) == pytest.approx(21.0)


def test_energy_chain_round_trips():
    it = est.it_energy_kwh(82_432, 400.0)                      # LLaMA-7B: GPU-hours x TDP
    assert it == pytest.approx(32_972.8)
    facility = est.facility_energy_kwh(it, 1.1)
    assert facility == pytest.approx(36_270.08)
    assert est.it_energy_from_facility_kwh(facility, 1.1) == pytest.approx(it)
    assert est.accelerator_hours_from_it_energy(it, 400.0) == pytest.approx(82_432)


def test_co2e_and_its_inverse():
    co2e = est.co2e_kg(36_270.08, 385.0)
    assert co2e == pytest.approx(13_963.98, rel=1e-6)          # LLaMA-7B publishes 14 t
    assert est.energy_from_co2e_kwh(co2e, 385.0) == pytest.approx(36_270.08)
    assert est.intensity_g_per_kwh(co2e, 36_270.08) == pytest.approx(385.0)


def test_power_from_tdp_and_cost_and_hours_from_cost():
    assert est.power_w_from_tdp(400.0, 0.75) == 300.0
    assert est.cost_usd(2_788_000, 2.0) == 5_576_000             # DeepSeek-V3: $2 per H800-hour
    assert est.accelerator_hours_from_cost(5_576_000, 2.0) == 2_788_000


def test_embodied_amortisation():
    per_accelerator = est.embodied_kg_per_accelerator(150.0, 2500.0, 8.0)
    assert per_accelerator == 462.5
    # a full year of one accelerator on a 4-year life carries a quarter of its embodied carbon
    assert est.co2e_embodied_kg(8766.0, per_accelerator, 4.0) == pytest.approx(462.5 / 4)


def test_flops_mfu_and_hours_from_flops():
    flops = est.train_flops(175e9, 300e9, 6.0)
    assert flops == pytest.approx(3.15e23)
    hours = est.accelerator_hours_from_flops(flops, 125e12, 0.197)
    assert est.mfu(flops, hours, 125e12) == pytest.approx(0.197)


def test_per_unit_of_work():
    assert est.cost_usd_per_million_tokens(5_576_000, 14.8e12) == pytest.approx(0.37676, rel=1e-4)
    assert est.energy_j_per_token(1.0, 3.6e6) == pytest.approx(1.0)
    assert est.co2e_g_per_million_tokens(1.0, 1e6) == pytest.approx(1000.0)


def test_estimators_are_elementwise_on_arrays():
    hours = np.array([1.0, 2.0, 3.0])
    assert np.allclose(est.it_energy_kwh(hours, 500.0), [0.5, 1.0, 1.5])
    assert np.allclose(est.relative_error(np.array([110.0, 90.0]), 100.0), [0.1, -0.1])


# ---------------------------------------------------------------- printed precision


@pytest.mark.parametrize("raw, expected", [
    (14.8, 0.05 / 14.8), ("14.8", 0.05 / 14.8), (1024, 0.5 / 1024), (1.1, 0.05 / 1.1),
    ("1.4e12", 0.05e12 / 1.4e12), (0.385, 0.0005 / 0.385), (0, 0.0), (433.196, 0.0005 / 433.196),
    # As written in a disclosure: exponent form, trailing zeros and thousands separators count;
    # a bare float is never widened (1.1e9 as a float is exact to the unit).
    ("1.1e9", 0.05e9 / 1.1e9), ("7.0e+9", 0.05e9 / 7e9), ("400", 0.5 / 400), ("400.0", 0.05 / 400),
    ("1.10", 0.005 / 1.1), ("3,311,616", 0.5 / 3311616), ("1710e-6", 0.5e-6 / 1710e-6), (1.1e9, 0.5 / 1.1e9),
])
def test_relative_precision_is_half_the_last_printed_digit(raw, expected):
    assert relative_precision(raw) == pytest.approx(expected)


# ---------------------------------------------------------------- the uncertain-quantity algebra


def _var(slot: str, value: float, low: float, high: float, cid: str) -> Q:
    return Q(value, ((var_id(slot, ((1.0, low / value, high / value),)), 1),), rank=ESTIMATED,
             ids=frozenset({cid}), labels={slot: (cid,)})


def test_q_runs_through_the_estimators_and_tracks_status_and_ids():
    hours = Q(1000.0, rank=0)
    pue = _var("pue", 1.5, 1.1, 1.8, "pue:::unknown")
    facility = est.facility_energy_kwh(est.it_energy_kwh(hours, Q(400.0, rank=0)), pue)
    assert facility.value == pytest.approx(600.0)
    assert facility.rank == ESTIMATED and facility.ids == {"pue:::unknown"}
    derived = est.it_energy_kwh(hours, Q(400.0, rank=0))
    assert derived.rank == DERIVED and not derived.terms


def test_an_assumption_cancels_when_divided_back_out():
    power = _var("power_fraction", 300.0, 200.0, 400.0, "a")
    hours = est.accelerator_hours_from_it_energy(Q(30.0, rank=0), power)
    assert hours.terms                                          # hours depend on the assumed power
    assert not est.it_energy_kwh(hours, power).terms            # ... energy again does not


def test_rounding_interval_propagates_worst_case():
    a = Q(10.0, rlo=0.99, rhi=1.01, rank=0)
    b = Q(2.0, rlo=0.9, rhi=1.1, rank=0)
    assert ((a * b).rlo, (a * b).rhi) == pytest.approx((0.891, 1.111))
    assert ((a / b).rlo, (a / b).rhi) == pytest.approx((0.99 / 1.1, 1.01 / 0.9))


def test_comonotonic_sum_and_tornado_per_component():
    gpu = _var("embodied", 150.0, 50.0, 300.0, "embodied:gpu")
    host = _var("embodied", 2500.0, 1500.0, 3500.0, "embodied:host")
    total = gpu + host / 8.0
    assert total.value == pytest.approx(462.5)
    entries = {e["assumption"]: e for e in tornado(total)}
    assert entries["embodied:gpu"]["low"] == pytest.approx(462.5 - 100.0)
    assert entries["embodied:host"]["high"] == pytest.approx(462.5 + 125.0)


def test_interval_contains_central_and_follows_the_percentiles():
    mc = MonteCarlo(10_000, seed=0)
    q = _var("pue", 1.5, 1.1, 1.8, "pue:::unknown")
    low, high = interval(q, mc)
    assert 1.1 < low < 1.5 < high < 1.8
    draws = 1.5 * mc.var(q.terms[0][0])
    assert (low, high) == pytest.approx(tuple(np.percentile(draws, [5, 95], method="inverted_cdf")))
    edge = _var("grid_intensity", 1.0, 1.0, 1.08, "loss")        # central at the edge of its range
    assert interval(edge, mc)[0] == 1.0


def test_multi_term_ranking_matches_brute_force():
    mc = MonteCarlo(5_000, seed=3)
    a, b = _var("pue", 1.2, 1.0, 1.6, "a"), _var("grid_intensity", 400.0, 200.0, 500.0, "b")
    q = a * b
    brute = 480.0 * np.percentile(mc.var(a.terms[0][0]) * mc.var(b.terms[0][0]), [5, 95], method="inverted_cdf")
    assert interval(q, mc) == pytest.approx(tuple(brute))


def test_pert_is_bounded_with_the_mode_at_central():
    u = np.linspace(0.0005, 0.9995, 2000)
    x = pert_ppf(u, 0.5, 1.0, 2.0)
    assert x.min() >= 0.5 and x.max() <= 2.0
    hist, edges = np.histogram(pert_ppf(np.random.default_rng(0).random(200_000), 0.5, 1.0, 2.0), bins=30)
    assert 0.8 < edges[hist.argmax()] < 1.2


@pytest.mark.parametrize("low, high", [(0.5, 1.5), (1.0, 1.08), (0.9, 1.0), (0.07, 1.49), (0.999, 1.0)])
def test_tabulated_pert_matches_exact_inside_the_percentile_band(low, high):
    u = np.random.default_rng(1).random(50_000)
    inner = (u > 0.01) & (u < 0.99)
    err = np.abs(pert_ppf(u, low, 1.0, high) - pert_ppf_tabulated(u, low, 1.0, high))[inner].max()
    assert err < 1e-4 * (high - low)
