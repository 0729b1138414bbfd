"""Words for what the audit prints: meters, published fields and reference coefficients named as an
auditor reads them ("GPU power as a share of TDP"), not by their identifiers
("assumptions:gpu_power_fraction_of_tdp"). The attachments keep the identifiers, so a printed
label traces to its data row through audit.csv and factors.csv.
"""
from __future__ import annotations

import re

METER_LABELS = {
    "accelerator_hours": "Accelerator-hours", "it_energy_kwh": "IT energy (GPU boards)",
    "facility_energy_kwh": "Facility energy (IT energy x PUE)", "co2e_location_kg": "CO2e, location-based",
    "co2e_market_kg": "CO2e, market-based", "co2e_embodied_kg": "CO2e, embodied", "cost_usd": "Cost",
    "train_flops": "Training compute", "mfu": "Model FLOPs utilisation",
    "cost_usd_per_million_tokens": "Cost per million tokens", "energy_j_per_token": "Energy per token",
    "co2e_g_per_million_tokens": "CO2e per million tokens",
}
# Disclosure-format fields, as the audit names them in its text.
FIELD_LABELS = {
    "params": "parameters", "active_params": "active parameters", "tokens": "tokens", "accelerator": "accelerator",
    "accelerator_count": "accelerators", "accelerator_hours": "accelerator-hours", "training_days": "training days",
    "power_w": "power per accelerator (W)", "power_basis": "power basis", "pue": "PUE", "energy_scope": "energy scope",
    "location": "location", "grid_gco2e_per_kwh": "grid intensity (g/kWh)", "energy_mwh": "energy (MWh)",
    "co2e_location_t": "location-based CO2e (t)", "co2e_market_t": "market-based CO2e (t)", "cost_usd": "cost (USD)",
    "price_usd_per_accelerator_hour": "price per accelerator-hour (USD)", "facility_type": "facility type",
    "market_gco2e_per_kwh": "market-based factor (g/kWh)", "operator": "operator", "year": "year",
    "convention": "reporting convention", "precision": "precision", "train_flops": "training FLOPs",
}
ASSUMPTION_LABELS = {
    "gpu_power_fraction_of_tdp": "GPU power as a share of TDP", "pue_unknown": "PUE of an unknown facility",
    "hardware_lifetime_years": "hardware life", "accelerators_per_server": "GPUs per server",
    "gpu_embodied_kgco2e_unknown": "embodied carbon of a GPU of unknown model",
    "train_flops_per_param_token": "training FLOPs per parameter and token", "mfu_typical": "typical model FLOPs utilisation",
    "gpu_utilization_unknown": "GPU utilisation when unknown",
    "server_overhead_fraction": "host power beyond the GPUs, as a share of GPU power",
}
SPEC_LABELS = {"tdp_w": "TDP", "idle_w": "idle power", "memory_gb": "memory"}
COEFFICIENT = re.compile(r"\b(assumptions|gpu_specs|pue|grid_intensity|embodied|operators|convention_tdp|check_limits):[^\s,;()]+")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def _words(x: str) -> str:
    return x.replace("_", " ")


def label(cid: str) -> str:
    """A coefficient id as words."""
    file, _, key = cid.partition(":")
    parts = key.split(":")
    if file in ("assumptions", "check_limits"):
        return ASSUMPTION_LABELS.get(key, _words(key))
    if file == "gpu_specs" and len(parts) == 2:
        metric = parts[1]
        what = SPEC_LABELS.get(metric) or (f"{metric.removeprefix('peak_flops_')} peak FLOP/s" if metric.startswith("peak_flops_")
                                          else _words(metric))
        return f"{what} of the {parts[0]}"
    if file == "pue" and len(parts) == 3:
        provider, region, facility = parts
        where = " ".join(p for p in (provider, region) if p) or "a facility"
        return f"PUE of {where}" + (f" ({_words(facility)})" if facility and not region else "")
    if file == "grid_intensity" and len(parts) >= 4:
        basis, year, zone = parts[-1], parts[-2], ":".join(parts[1:-2])
        return f"grid intensity of {zone} ({year}, {_words(basis)})"
    if file == "operators" and len(parts) == 3:
        operator, year, metric = parts
        what = "market-based factor" if metric.startswith("market") else "PUE" if metric == "pue" else _words(metric)
        return f"{operator.capitalize()}'s published {what} ({year})"
    if file == "embodied" and len(parts) == 2:
        return f"embodied carbon of one {parts[0]}" if parts[1] == "gpu" else f"embodied carbon of the host server ({parts[0]})"
    if file == "convention_tdp" and len(parts) == 2:
        return f"TDP of the {parts[1]} in the {parts[0]} tool's table"
    return _words(key)


def words(text: str | None) -> str:
    """Free text (a method, a finding) with every identifier in it put into words."""
    if not text:
        return ""
    text = COEFFICIENT.sub(lambda m: label(m.group(0)), str(text))
    return SNAKE.sub(lambda m: FIELD_LABELS.get(m.group(0)) or METER_LABELS.get(m.group(0)) or _words(m.group(0)), text)
