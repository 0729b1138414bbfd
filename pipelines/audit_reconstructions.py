"""The footprint audit's reconstructions, computed in the build (reports compute no figure):
`audit_reconstructions` (grain: one engine input), the reconstruct engine's result for every
input the audit can ask for (the disclosures themselves are the audit_disclosures mart):
- every stored disclosure, as `meterbook reconstruct` reads it;
- every disclosure with its IT energy replaced by the measurement of a host workload it could
  match (same GPU model; the audit's matching picks among them when it renders);
- every CodeCarbon run with a GPU energy figure, as a disclosure reporting IT energy.

An input is keyed by a hash of its JSON, so the audit finds the result of exactly the input it
built. Results are the engine's ``reconstruct --json`` objects: one seeded Monte Carlo batch
gives the same figures whatever else is in it (the draws depend only on the seed).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import duckdb
import pandas as pd

from core.sql import rows_as_dicts
from core.text import run_name
from core.units import KWH_PER_MWH
from pipelines.reconstruct import reconstruct_many
from pipelines.reconstruct.reference import resolve_gpu
from schemas.audit_reconstructions import KEY_HEX
from sources.disclosure_format import MEASURED_BY, DisclosureError, warehouse_engine_input

COLUMNS = {"input_key": "string", "model": "string", "result_json": "string", "error": "string"}
S_PER_DAY = 86_400.0


def input_key(d: Mapping[str, Any]) -> str:
    """The key of one engine input: its JSON, keys sorted, hashed."""
    return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:KEY_HEX]


def measured_input(d: dict[str, Any], match: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The disclosure with its IT energy replaced by the matched workload's measurement (None when
    it matched no host, or the host's energy is unknown). Its CO2e, if published, stays published."""
    if not match or match.get("status") != "matched" or not match.get("it_energy_kwh"):
        return None
    texts = {k: v for k, v in (d.get("number_text") or {}).items() if k not in ("energy_mwh", "energy_scope")}
    return {**d, "energy_mwh": match["it_energy_kwh"] / KWH_PER_MWH, "energy_scope": "it", MEASURED_BY: "DCGM",
            "number_text": texts}


def run_input(r: Mapping[str, Any]) -> dict[str, Any]:
    """A CodeCarbon run as a disclosure reporting IT energy: its GPU energy with CodeCarbon's PUE
    undone (the audit applies the zone's), its GPUs and duration, its cloud zone."""
    pue = r["pue"] if r.get("pue") else 1.0
    gpus = r.get("gpu_count") or r.get("gpu_count_in_model")
    zone = f"{r['cloud_provider']}:{r['cloud_region']}" if r.get("cloud_provider") and r.get("cloud_region") else r.get("country_iso")
    d = {"model": run_name(r), "source": f"CodeCarbon run {r['run_id'] or r['row_number']}",
         "energy_mwh": r["gpu_energy_kwh"] / pue / KWH_PER_MWH, "energy_scope": "it", MEASURED_BY: "CodeCarbon",
         "location": zone,
         "year": r["end_utc"].year}
    if r.get("gpu_model") and gpus:
        d.update(accelerator=r["gpu_model"], accelerator_count=gpus, training_days=r["duration_s"] / S_PER_DAY)
    return d


DISCLOSURES_SQL = "select * from disclosures order by model, file_id, row_number"
RUNS_SQL = """select * from run_month where gpu_energy_kwh is not null and gpu_energy_kwh > 0
              order by month, end_utc, run_id"""


def engine_inputs(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every input the audit can reconstruct, once each (see the module docstring)."""
    disclosures = [warehouse_engine_input(r) for r in rows_as_dicts(con, DISCLOSURES_SQL)]
    measured_kwh: dict[str | None, set[float]] = {}
    for gpu, kwh in con.execute("""select distinct gpu_model, it_energy_kwh from host_workload_month
                                   where it_energy_kwh > 0 order by all""").fetchall():
        measured_kwh.setdefault(gpu, set()).add(kwh)
    measured = [measured_input(d, {"status": "matched", "it_energy_kwh": kwh})
                for d in disclosures for kwh in sorted(measured_kwh.get(resolve_gpu(d.get("accelerator") or ""), ()))]
    runs = [run_input(r) for r in rows_as_dicts(con, RUNS_SQL)]
    unique: dict[str, dict[str, Any]] = {}
    for d in [*disclosures, *(m for m in measured if m), *runs]:
        unique.setdefault(input_key(d), d)
    return list(unique.values())


def _results(inputs: list[dict[str, Any]]) -> list[tuple[dict | None, str | None]]:
    """(result, None) or (None, why the engine cannot read it) per input: one batch, and where a
    stored input fails, each on its own, so one bad disclosure costs only its own audit."""
    try:
        return [(r, None) for r in reconstruct_many(inputs)] if inputs else []
    except DisclosureError:
        out: list[tuple[dict | None, str | None]] = []
        for d in inputs:
            try:
                out.append((reconstruct_many([d])[0], None))
            except DisclosureError as exc:
                out.append((None, json.dumps({"what": exc.what, "where": exc.where, "fix": exc.fix})))
        return out


def audit_reconstructions_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    inputs = engine_inputs(con)
    rows = [{"input_key": input_key(d), "model": str(d.get("model") or ""),
             "result_json": json.dumps(result, default=str) if result is not None else None, "error": error}
            for d, (result, error) in zip(inputs, _results(inputs))]
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(COLUMNS)
