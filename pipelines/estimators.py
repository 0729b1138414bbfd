"""The meter graph: small pure estimators with the equation and units in each docstring.

Every function works on floats and on numpy arrays alike (elementwise), so the same code
serves a single disclosure and a vectorized batch. No coefficients live here: factors such as
PUE, grid intensity or the FLOPs per parameter-token arrive as arguments from
``sources/reference/*.csv``; the only constants are unit definitions from ``core.units``.

Each forward estimator has its inverse next to it, so the graph runs in both directions
where the arithmetic allows (energy reported and hours missing: derive the hours).
"""
from __future__ import annotations

from typing import TypeVar

import numpy as np

from core.units import G_PER_KG, H_PER_DAY, H_PER_YEAR, J_PER_KWH, S_PER_H, TOKENS_PER_MILLION, W_PER_KW

Num = TypeVar("Num", float, np.ndarray)


# ---------------------------------------------------------------- accelerator-hours


def accelerator_hours_from_days(accelerator_count: Num, training_days: Num) -> Num:
    """accelerator_hours [h] = accelerator_count x training_days [d] x 24 h/d."""
    return accelerator_count * training_days * H_PER_DAY


def training_days_from_hours(accelerator_hours: Num, accelerator_count: Num) -> Num:
    """training_days [d] = accelerator_hours [h] / accelerator_count / 24 h/d."""
    return accelerator_hours / accelerator_count / H_PER_DAY


def accelerator_hours_from_cost(cost_usd: Num, price_usd_per_accelerator_hour: Num) -> Num:
    """accelerator_hours [h] = cost [USD] / price [USD per accelerator-hour]."""
    return cost_usd / price_usd_per_accelerator_hour


def accelerator_hours_from_flops(train_flops: Num, peak_flops_per_s: Num, mfu: Num) -> Num:
    """accelerator_hours [h] = FLOPs / (peak dense FLOP/s x MFU) / 3600 s/h (LLMCarbon's time model)."""
    return train_flops / (peak_flops_per_s * mfu) / S_PER_H


# ---------------------------------------------------------------- power and energy


def power_w_from_tdp(tdp_w: Num, power_fraction_of_tdp: Num) -> Num:
    """Average board power [W] = TDP [W] x fraction of TDP drawn while running (utilisation model)."""
    return tdp_w * power_fraction_of_tdp


def it_energy_kwh(accelerator_hours: Num, power_w: Num) -> Num:
    """IT energy [kWh] = accelerator-hours [h] x average power per accelerator [W] / 1000 W/kW."""
    return accelerator_hours * power_w / W_PER_KW


def accelerator_hours_from_it_energy(it_energy_kwh_: Num, power_w: Num) -> Num:
    """accelerator_hours [h] = IT energy [kWh] x 1000 W/kW / power per accelerator [W]."""
    return it_energy_kwh_ * W_PER_KW / power_w


def power_w_from_it_energy(it_energy_kwh_: Num, accelerator_hours: Num) -> Num:
    """Average power per accelerator [W] = IT energy [kWh] x 1000 W/kW / accelerator-hours [h]."""
    return it_energy_kwh_ * W_PER_KW / accelerator_hours


def facility_energy_kwh(it_energy_kwh_: Num, pue: Num) -> Num:
    """Facility energy [kWh] = IT energy [kWh] x PUE [ratio]."""
    return it_energy_kwh_ * pue


def it_energy_from_facility_kwh(facility_energy_kwh_: Num, pue: Num) -> Num:
    """IT energy [kWh] = facility energy [kWh] / PUE [ratio]."""
    return facility_energy_kwh_ / pue


# ---------------------------------------------------------------- carbon


def co2e_kg(energy_kwh: Num, intensity_g_per_kwh: Num) -> Num:
    """Operational CO2e [kg] = energy [kWh] x intensity [gCO2e/kWh] / 1000 g/kg.

    Location-based with a grid average intensity, market-based with a contractual or
    residual-mix factor (GHG Protocol Scope 2 dual reporting).
    """
    return energy_kwh * intensity_g_per_kwh / G_PER_KG


def energy_from_co2e_kwh(co2e_kg_: Num, intensity_g_per_kwh: Num) -> Num:
    """Energy [kWh] = CO2e [kg] x 1000 g/kg / intensity [gCO2e/kWh]."""
    return co2e_kg_ * G_PER_KG / intensity_g_per_kwh


def intensity_g_per_kwh(co2e_kg_: Num, energy_kwh: Num) -> Num:
    """Implied intensity [gCO2e/kWh] = CO2e [kg] x 1000 g/kg / energy [kWh]."""
    return co2e_kg_ * G_PER_KG / energy_kwh


def embodied_kg_per_accelerator(gpu_embodied_kg: Num, server_embodied_kg: Num, accelerators_per_server: Num) -> Num:
    """Embodied CO2e per accelerator [kg] = GPU [kg] + host server [kg] / accelerators per server."""
    return gpu_embodied_kg + server_embodied_kg / accelerators_per_server


def co2e_embodied_kg(accelerator_hours: Num, embodied_kg_per_accelerator_: Num, lifetime_years: Num) -> Num:
    """Amortised embodied CO2e [kg] = accelerator-hours [h] x embodied per accelerator [kg]
    / (lifetime [y] x 8766 h/y): the share of the hardware's life the job reserved (SCI's
    TE x TiR/EL)."""
    return accelerator_hours * embodied_kg_per_accelerator_ / (lifetime_years * H_PER_YEAR)


# ---------------------------------------------------------------- cost and work


def cost_usd(accelerator_hours: Num, price_usd_per_accelerator_hour: Num) -> Num:
    """Cost [USD] = accelerator-hours [h] x price [USD per accelerator-hour]."""
    return accelerator_hours * price_usd_per_accelerator_hour


def train_flops(params: Num, tokens: Num, flops_per_param_token: Num) -> Num:
    """Training FLOPs = FLOPs per parameter-token (6: forward + backward) x (active) params x tokens."""
    return flops_per_param_token * params * tokens


def mfu(train_flops_: Num, accelerator_hours: Num, peak_flops_per_s: Num) -> Num:
    """Model FLOPs utilisation [fraction] = FLOPs / (accelerator-hours x 3600 s/h x peak dense FLOP/s)."""
    return train_flops_ / (accelerator_hours * S_PER_H * peak_flops_per_s)


def cost_usd_per_million_tokens(cost_usd_: Num, tokens: Num) -> Num:
    """Cost per million tokens [USD/Mtok] = cost [USD] / tokens x 1e6."""
    return cost_usd_ / tokens * TOKENS_PER_MILLION


def energy_j_per_token(energy_kwh: Num, tokens: Num) -> Num:
    """Energy per token [J/token] = energy [kWh] x 3.6e6 J/kWh / tokens."""
    return energy_kwh * J_PER_KWH / tokens


def co2e_g_per_million_tokens(co2e_kg_: Num, tokens: Num) -> Num:
    """CO2e per million tokens [g/Mtok] = CO2e [kg] x 1000 g/kg / tokens x 1e6."""
    return co2e_kg_ * G_PER_KG / tokens * TOKENS_PER_MILLION


def relative_error(estimate: Num, reference: Num) -> Num:
    """(estimate - reference) / |reference|: how far a recomputation is from a published figure."""
    return (estimate - reference) / abs(reference)
