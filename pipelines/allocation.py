"""Pure helpers for allocation and findings: the meters and their rounding quanta, and the
scaling-efficiency fit (Amdahl plus communication) behind the GPU-count finding.

Rounding design (allocation_lines.sql applies it): every source group's amount of a meter is
split by largest remainder in whole quanta (a cent, a watt-hour, a gram, 3.6 s of GPU time);
the sub-quantum residue of the source amount itself (a bill line of 32.7726 USD has 0.0026 USD
below the cent) stays on the line with the largest share, so allocated lines sum to the source
exactly, in DECIMAL(38, 12), and no line is ever off by more than one quantum from its share.
"""
from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

from pipelines.units import G_PER_KG, S_PER_H, WH_PER_KWH

# Decimal places of each meter's quantum. Definitions, not coefficients: the cent of the billing
# currency, the watt-hour (1 / WH_PER_KWH kWh), the gram (1 / G_PER_KG kg), 1/1000 GPU-hour.
CENT_PLACES = 2
WH_PLACES = len(str(int(WH_PER_KWH))) - 1
G_PLACES = len(str(int(G_PER_KG))) - 1
MILLI_HOUR_PLACES = 3
METERS: dict[str, tuple[str, int]] = {
    "billed_cost": ("currency", CENT_PLACES),
    "effective_cost": ("currency", CENT_PLACES),
    "list_cost": ("currency", CENT_PLACES),
    "gpu_hours": ("h", MILLI_HOUR_PLACES),              # billed GPU-hours
    "gpu_hours_observed": ("h", MILLI_HOUR_PLACES),     # telemetry GPU-hours (coverage)
    "effective_gpu_hours": ("h", MILLI_HOUR_PLACES),    # observed GPU-hours x utilization
    "it_energy_kwh": ("kWh", WH_PLACES),
    "it_energy_kwh_measured": ("kWh", WH_PLACES),
    "facility_energy_kwh": ("kWh", WH_PLACES),
    "facility_energy_kwh_low": ("kWh", WH_PLACES),
    "facility_energy_kwh_high": ("kWh", WH_PLACES),
    "co2e_kg": ("kg", G_PLACES),
    "co2e_kg_low": ("kg", G_PLACES),
    "co2e_kg_high": ("kg", G_PLACES),
    "co2e_market_kg": ("kg", G_PLACES),
    "co2e_market_kg_low": ("kg", G_PLACES),
    "co2e_market_kg_high": ("kg", G_PLACES),
    "co2e_hourly_kg": ("kg", G_PLACES),              # location-based, hour by hour where a series gives it
    "co2e_hourly_kg_low": ("kg", G_PLACES),
    "co2e_hourly_kg_high": ("kg", G_PLACES),
    "facility_energy_kwh_hourly": ("kWh", WH_PLACES),     # the part of facility energy with an hourly factor
    "facility_energy_kwh_market_na": ("kWh", WH_PLACES),  # ... with no market-based factor
}


def amdahl_comm_time(k: np.ndarray, t1_h: float, serial: float, comm: float) -> np.ndarray:
    """Wall-clock hours at K GPUs: T(K) = T1 x (s + (1 - s) / K + c x (K - 1)).

    s is the serial fraction (Amdahl), c the communication cost per extra GPU as a fraction of T1.
    Speedup S(K) = T(1) / T(K); efficiency E(K) = S(K) / K.
    """
    return t1_h * (serial + (1 - serial) / k + comm * (k - 1))


def fit_scaling(k: list[float], hours: list[float]) -> tuple[float, float, float]:
    """Least-squares (T1, s, c) with s in [0, 1] and c, T1 >= 0; needs three or more GPU counts."""
    ks, ts = np.asarray(k, dtype=float), np.asarray(hours, dtype=float)
    guess = (float(ts[np.argmin(ks)] * ks.min()), 0.1, 0.01)
    (t1, s, c), _ = curve_fit(amdahl_comm_time, ks, ts, p0=guess, bounds=([0, 0, 0], [np.inf, 1, np.inf]))
    return float(t1), float(s), float(c)


def efficiency(k: float, serial: float, comm: float) -> float:
    """E(K) = S(K) / K with S(K) = T(1) / T(K) under the fitted model (T1 cancels)."""
    return float(1.0 / (k * amdahl_comm_time(np.asarray(float(k)), 1.0, serial, comm)))


def cost_optimal_k(t1_h: float, serial: float, comm: float, price_per_gpu_h: float, value_per_h: float,
                   k_max: int) -> tuple[int, float]:
    """K* = argmin over K = 1..k_max of T(K) x (K x GPU price + value of wall-clock time); and its cost."""
    ks = np.arange(1, k_max + 1, dtype=float)
    cost = amdahl_comm_time(ks, t1_h, serial, comm) * (ks * price_per_gpu_h + value_per_h)
    i = int(np.argmin(cost))
    return int(ks[i]), float(cost[i])


FIT_COLUMNS = {
    "month": "string", "project": "string", "gpu_model": "string", "gpu_counts": "string", "runs": "int64",
    "k_used": "int64", "t1_h": "float64", "serial_fraction": "float64", "comm_fraction": "float64",
    "efficiency_at_used": "float64", "price_usd_per_gpu_h": "float64", "k_opt": "Int64", "k_opt_low": "Int64",
    "k_opt_high": "Int64", "cost_at_used_usd": "float64", "cost_at_opt_usd": "float64", "rmse_h": "float64",
}


def scaling_fits_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per month x CodeCarbon project that ran at three or more GPU counts.

    K used = the GPU count of the family's latest run; the GPU price is the month's effective cost
    per billed GPU-hour of that GPU model (null when the bill has none: then no K*). The search
    for K* runs to twice the largest count observed, beyond which the fit is extrapolation.
    """
    runs = con.execute("""
        select strftime(end_utc, '%Y-%m') as month, project, any_value(gpu_model) as gpu_model,
               list(coalesce(gpu_count, gpu_count_in_model) order by end_utc) as ks,
               list(duration_s order by end_utc) as secs
        from runs where project is not null and coalesce(gpu_count, gpu_count_in_model) > 0
        group by all having count(distinct coalesce(gpu_count, gpu_count_in_model)) >= 3""").fetchall()
    prices = dict(((m, g), p) for m, g, p in con.execute("""
        select month, gpu_model, sum(effective_cost)::double / nullif(sum(gpu_hours), 0)
        from int_charges_teams where gpu_hours > 0 group by all""").fetchall())
    found = con.execute("select value, low, high from ref_assumptions where assumption_id = 'wallclock_value_usd_per_h'").fetchall()
    value = found[0] if found else None
    out = []
    for month, project, gpu_model, ks, secs in runs:
        hours = [s / S_PER_H for s in secs]
        t1, s, c = fit_scaling(ks, hours)
        k_used, k_max = int(ks[-1]), 2 * int(max(ks))
        resid = np.asarray(hours) - amdahl_comm_time(np.asarray(ks, dtype=float), t1, s, c)
        price = prices.get((month, gpu_model))
        row = {"month": month, "project": project, "gpu_model": gpu_model,
               "gpu_counts": ",".join(str(int(k)) for k in sorted(set(ks))), "runs": len(ks), "k_used": k_used,
               "t1_h": t1, "serial_fraction": s, "comm_fraction": c, "efficiency_at_used": efficiency(k_used, s, c),
               "price_usd_per_gpu_h": price, "rmse_h": float(np.sqrt(np.mean(resid ** 2)))}
        if price is not None and value is not None:
            row["k_opt"], row["cost_at_opt_usd"] = cost_optimal_k(t1, s, c, price, value[0], k_max)
            row["k_opt_low"] = cost_optimal_k(t1, s, c, price, value[1], k_max)[0]
            row["k_opt_high"] = cost_optimal_k(t1, s, c, price, value[2], k_max)[0]
            row["cost_at_used_usd"] = float(amdahl_comm_time(np.asarray(float(k_used)), t1, s, c) * (k_used * price + value[0]))
        out.append(row)
    return pd.DataFrame(out, columns=list(FIT_COLUMNS)).astype(FIT_COLUMNS)
