"""Reconstruction engine: 10,000 disclosures x 10,000 Monte Carlo draws (target < 10 s, 2 cores).

The disclosures are synthetic but shaped like real ones: a GPU from gpu_specs.csv, a location
drawn from every zone in grid_intensity.csv (countries, US states, cloud regions) or missing,
GPU-hours, sometimes params/tokens, measured power, PUE, price or a reported CO2e.
First prints the leave-one-out calibration table against sources/reference/calibration/published_footprints.csv:
(a) all figures, (b) those resting on assumptions, (c) the priors alone.
Run: python -m benchmarks.run reconstruct
"""
from __future__ import annotations

import os
import time

import numpy as np

from pipelines import reconstruct as rc
from pipelines.reconstruct import sampling as rc_sampling
from sources import reference_data as rd

N_DISCLOSURES = 10_000
DRAWS = 10_000
SEED = 0


def synthetic_disclosures(n: int, seed: int = SEED) -> list[dict]:
    rng = np.random.default_rng(seed)
    gpus = sorted({r["gpu_model"] for r in rd.read_rows("gpu_specs") if r["metric"] == "tdp_w"})
    zones = [r["zone_id"] for r in rd.read_rows("grid_intensity") if r["zone_kind"] != "world"] + [None]
    out = []
    for i in range(n):
        d: dict = {"model": f"synthetic-{i}", "source": "benchmarks/bench_reconstruct.py",
                   "accelerator": gpus[rng.integers(len(gpus))], "location": zones[rng.integers(len(zones))],
                   "accelerator_hours": float(rng.integers(1_000, 5_000_000))}
        if rng.random() < 0.5:
            d.update(params=float(rng.integers(1, 400)) * 1e9, tokens=float(rng.integers(1, 15_000)) * 1e9)
        if rng.random() < 0.3:
            d.update(power_w=float(rng.integers(150, 700)), power_basis="measured")
        if rng.random() < 0.3:
            d["pue"] = round(float(rng.uniform(1.05, 1.6)), 2)
        if rng.random() < 0.3:
            d["price_usd_per_accelerator_hour"] = round(float(rng.uniform(0.5, 4.0)), 2)
        if rng.random() < 0.2:
            d["co2e_location_t"] = round(float(rng.uniform(1, 500)), 1)
        out.append(d)
    return out


def main() -> None:
    from pipelines.reconstruct.calibration import calibrate, table, without_published_factors
    priors = calibrate(without_published_factors(), draws=DRAWS, seed=SEED, explain=False)
    print(table(calibrate(draws=DRAWS, seed=SEED), priors), flush=True)
    disclosures = synthetic_disclosures(N_DISCLOSURES)
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    results = rc.reconstruct_many(disclosures, draws=DRAWS, seed=SEED)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    meters = sum(len(r["meters"]) for r in results)
    # CPU time and the load average as well as wall time: on a shared 2-core machine the wall
    # clock includes waiting for the other jobs (load 2 means the cores were already busy).
    print(f"reconstruct: {N_DISCLOSURES:,} disclosures x {DRAWS:,} draws: {elapsed:.2f} s wall, {cpu:.2f} s CPU "
          f"at load {load:.1f} -> {os.getloadavg()[0]:.1f} "
          f"({meters:,} meters, {sum(len(r['checks']) for r in results):,} checks, "
          f"{len(rc_sampling._VAR_KEYS):,} assumption shapes sampled)")
