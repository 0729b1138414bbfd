"""The GPU-count finding's model: wall-clock time at K GPUs as Amdahl's serial fraction plus a
communication cost per extra GPU, fitted per project from its runs, and the cost-optimal count K*."""
from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

from core.units import S_PER_H


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
        select strftime(end_utc, '%Y-%m') as month, project, min(gpu_model) as gpu_model,   -- one model per family; min, not any_value: order-free
               list(coalesce(gpu_count, gpu_count_in_model) order by end_utc) as ks,
               list(duration_s order by end_utc) as secs
        from run_month where project is not null and coalesce(gpu_count, gpu_count_in_model) > 0
        group by all having count(distinct coalesce(gpu_count, gpu_count_in_model)) >= 3""").fetchall()
    prices = dict(((m, g), p) for m, g, p in con.execute("""
        select month, gpu_model, sum(effective_cost)::double / nullif(sum(gpu_hours::decimal(38, 12))::double, 0)
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
