"""`meterbook report disclosure`: the forms a model's trainer files, filled from the marts.

One job (or the training jobs of a model) over a month or a period, from job_disclosure_month:
  ai-act     EU AI Act Annex XI 2(d)-(e), in the Code of Practice Model Documentation Form's
             terms (Training time; Amount of computation used for training; Amount of energy
             used for training; Measurement methodology): Markdown and JSON
  spdx       SPDX 3.0.1 ai_AIPackage with ai_energyConsumption (JSON-LD)
  cyclonedx  CycloneDX 1.6 machine-learning-model component, modelCard environmental
             considerations (energyConsumptions[])
  sci        Software Carbon Intensity (ISO/IEC 21031:2024), SCI = (E x I + M) per R, with E, I,
             M and R and their units: per training run, per million tokens, per 1,000 requests
Every figure is a mart column or a ratio of two (core.quantity checks the units of each ratio).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import duckdb

from core.csv_out import copy_csv, write_text
from core.errors import InputError
from core.quantity import Q
from core.units import H_PER_DAY, H_PER_YEAR, MONTHS_PER_YEAR
from reports.disclosure_documents import SCOPE_COLUMNS, cyclonedx, spdx
from reports.render import SCOPE_RULE
from sources.json_schemas import schema_errors

FORMATS = ("ai-act", "spdx", "cyclonedx", "sci")
SUMMED = ("gpu_hours", "gpu_hours_estimated", "work_flops", "tokens", "requests", "wall_clock_h", "it_energy_kwh",
          "facility_energy_kwh", "facility_energy_kwh_low", "facility_energy_kwh_high", "co2e_kg", "co2e_kg_low",
          "co2e_kg_high", "co2e_market_kg", "co2e_hourly_kg", "co2e_hourly_kg_low", "co2e_hourly_kg_high",
          "facility_energy_kwh_hourly", "embodied_co2e_kg", "embodied_co2e_kg_low", "embodied_co2e_kg_high")
NOT_AVAILABLE = ("co2e_market_kg",)   # null where the zone has no market-based factor: not zero
# the Model Documentation Form's training-time bands for national authorities, in months
TRAINING_TIME_BANDS = ((1, "less than 1 month"), (3, "1 to 3 months"), (6, "3 to 6 months"))
# a share this close to 0 or 1 is the rounding of the allocation's decimals, not energy
SHARE_ROUNDING = 1e-9
# SCI's software boundary (ISO/IEC 21031 asks that it be disclosed with the score): what the
# job_disclosure_month figures hold, and what they leave out
SCI_BOUNDARY = {
    "included": ["the GPUs the job held: their energy measured by DCGM where telemetry covers them, else billed "
                 "GPU-hours x TDP x an assumed power fraction",
                 "the data centre's overhead (cooling, power conversion) through its zone's assumed PUE",
                 "embodied emissions of those GPUs and their share of the host server, amortised over the hardware "
                 "life by GPU-hour (M)"],
    "excluded": ["host power beyond the GPUs (CPUs, memory, fans): not metered per job",
                 "networking, storage, CPU-only instances and managed services",
                 "work outside the job's windows in the work log (data preparation, evaluation, failed runs)",
                 "end-user devices",
                 "market-based instruments (certificates, contracts): SCI excludes them"],
}


def model_slug(model: str) -> str:
    return model.lower().replace(" ", "-")


def job_model(job_id: str, model: str) -> bool:
    """Whether a job trains the model: its id is the model's name, or that name and a suffix
    (`acme-embed-1b-pretrain` for Acme-Embed-1B), case and spaces aside. `subject` selects the same."""
    slug, job = model_slug(model), job_id.lower()
    return job == slug or job.startswith(slug + "-")


def subject(con: duckdb.DuckDBPyConnection, months: tuple[str, str], job: str | None, model: str | None) -> dict[str, Any]:
    """The job's (or the model's training jobs') mart figures over the months, summed."""
    if model:
        slug = model_slug(model)
        where, params = "(lower(job_id) = ? or lower(job_id) like ? || '-%') and workload = 'training'", [slug, slug]
    else:
        where, params = "job_id = ?", [job or ""]
    # a month or job whose market-based CO2e is not available (null) leaves the sum unknown: a partial
    # sum would understate it
    sums = ", ".join(f"case when count(*) = count({c}) then sum({c}) end as {c}" if c in NOT_AVAILABLE else f"sum({c}) as {c}"
                     for c in SUMMED)
    cur = con.execute(f"""
        select string_agg(distinct job_id, ', ' order by job_id) as jobs, min(month) as first_month, max(month) as last_month,
            string_agg(distinct workload, ', ' order by workload) as workload, max(params) as params,
            string_agg(distinct gpu_models, ', ' order by gpu_models) as gpu_models, max(gpus) as gpus,
            min(start_utc) as start_utc, max(end_utc) as end_utc,
            -- the weakest month sets the period's tier: one uncovered month leaves its energy out of the sum
            case when bool_or(energy_tier = 'uncovered') then 'uncovered' when bool_or(energy_tier = 'estimated') then 'estimated'
                 else 'measured' end as energy_tier,
            string_agg(distinct month, ', ' order by month) filter (where energy_tier = 'uncovered') as uncovered_months,
            sum(facility_energy_kwh) / nullif(sum(it_energy_kwh), 0) as pue, min(pue_low) as pue_low, max(pue_high) as pue_high,
            list_sort(list_distinct(flatten(list(pue_ids)))) as pue_ids,
            -- one provider over every month, or none named: a provider for part of the energy is not its provider
            case when count(*) = count(energy_provider) and count(distinct energy_provider) = 1 then min(energy_provider) end
                as energy_provider,
            list_sort(list_distinct(flatten(list(assumption_ids)))) as assumption_ids, count(*) as rows,
            {", ".join(f"string_agg(distinct {c}, ' + ' order by {c}) as {c}" for c in SCOPE_COLUMNS)}, {sums}
        from job_disclosure_month where month between ? and ? and {where}""", [*months, *params])
    row = dict(zip([d[0] for d in cur.description], cur.fetchone() or ()))
    if not row.get("rows"):
        what = f"model {model}" if model else f"job {job}"
        raise InputError(Path("job_disclosure_month"), f"no work-log job for {what}", f"months {months[0]} to {months[1]}",
                         "Name a job_id of the work log (meterbook export jobs lists them) and a month it ran in")
    return row


def ghg_scope(row: dict[str, Any]) -> dict[str, Any]:
    """The GHG Protocol scopes the job's CO2e falls in, from who owns the GPUs it ran on."""
    return {"electricity": row["electricity_scope"], "embodied": row["embodied_scope"], "ownership": row["ownership"],
            "rule": SCOPE_RULE}


def sci(row: dict[str, Any]) -> dict[str, Any]:
    """SCI = (E x I + M) / R for each functional unit, with its range; E facility kWh, I the
    location-based intensity the job's energy met (its hourly-matched CO2e over its kWh: the hours'
    grid intensity where the warehouse has a series for them, else the zone's annual average), M
    the GPUs' amortized embodied CO2e. Low and high combine the low and the high ends."""
    e = Q.of(row["facility_energy_kwh"], "kWh")
    # M in grams, as the SCI specification gives it (E x I is grams too: kWh x g/kWh)
    out: dict[str, Any] = {"E": {"value": e.to("kWh"), "unit": "kWh"},
                           "M": {"value": Q.of(row["embodied_co2e_kg"], "kg").to("g"), "unit": "g CO2e"}}
    if row["facility_energy_kwh"]:
        out["I"] = {"value": (Q.of(row["co2e_hourly_kg"], "kg") / e).to("g/kWh"), "unit": "g CO2e/kWh",
                    "basis": row.get("intensity_basis") or intensity_basis(row)}
    run = "training run" if row["workload"] == "training" else "job"   # a serving job's R is no training run
    units = [(f"per {run}", Q.of(1, "run"), "g/run", f"g CO2e per {run}"),
             ("per million tokens", Q.of(row["tokens"] or 0, "token"), "g/Mtok", "g CO2e per million tokens"),
             ("per 1,000 requests", Q.of(row["requests"] or 0, "request"), "g/krequest", "g CO2e per 1,000 requests")]
    scores = []
    for name, r, unit, label in units:
        if not r.base:
            continue
        score = {}
        for end, co2e, m in (("value", "co2e_hourly_kg", "embodied_co2e_kg"), ("low", "co2e_hourly_kg_low", "embodied_co2e_kg_low"),
                             ("high", "co2e_hourly_kg_high", "embodied_co2e_kg_high")):
            # E x I is the job's operational CO2e itself: the mart's figure, not a product redone here
            score[end] = ((Q.of(row[co2e], "kg") + Q.of(row[m], "kg")) / r).to(unit)
        scores.append({"functional_unit": name, "R": r.to(unit.split("/")[1]), "unit": label, **score})
    out["scores"] = scores
    out["boundary"] = row.get("sci_boundary") or SCI_BOUNDARY
    out["ghg_scope"] = ghg_scope(row)
    return out


def intensity_basis(row: dict[str, Any]) -> str:
    """Which grid intensity I is (SCI allows an average or a marginal one; the warehouse holds
    averages): the share of E an hourly series covered, the rest at the zone's annual average."""
    share = (Q.of(row["facility_energy_kwh_hourly"] or 0, "kWh") / Q.of(row["facility_energy_kwh"], "kWh")).to("1")
    if share >= 1 - SHARE_ROUNDING:
        return "the grid's average intensity in each hour the job ran (a grid-hourly series), location-based"
    if share <= SHARE_ROUNDING:
        return "the zone's annual average intensity, location-based: no grid-hourly series covers the job's hours"
    return (f"the grid's average intensity hour by hour for {share:.0%} of E (a grid-hourly series), the zone's annual "
            "average for the hours no series covers; location-based")


def sig2(x: float | None) -> str:
    """At least two significant figures, as the Model Documentation Form asks (e.g. 3.3e+20)."""
    return "N/A" if x is None else f"{x:.2e}"


def ai_act(row: dict[str, Any]) -> dict[str, Any]:
    days = (row["wall_clock_h"] or 0) / H_PER_DAY
    months = (row["wall_clock_h"] or 0) / (H_PER_YEAR / MONTHS_PER_YEAR)
    band = next((b for limit, b in TRAINING_TIME_BANDS if months < limit), "more than 6 months")
    energy_mwh = Q.of(row["facility_energy_kwh"], "kWh").to("MWh")
    return {
        "Training time": {"wall_clock_days": days, "hardware_days": (row["gpu_hours"] or 0) / H_PER_DAY, "band": band,
                          "from": str(row["start_utc"]), "to": str(row["end_utc"]), "hardware": row["gpu_models"]},
        "Amount of computation used for training": {"flop": row["work_flops"], "written": sig2(row["work_flops"]),
                                                    "order_of_magnitude": _magnitude(row["work_flops"])},
        "Measurement methodology (computation)": "estimated: FLOPs per parameter and token (6 for training) x parameters "
                                                 "x tokens, from the work log",
        "Amount of energy used for training": {"mwh": energy_mwh, "written": sig2(energy_mwh),
                                               "mwh_low": Q.of(row["facility_energy_kwh_low"], "kWh").to("MWh"),
                                               "mwh_high": Q.of(row["facility_energy_kwh_high"], "kWh").to("MWh"),
                                               "tier": row["energy_tier"], "pue": pue(row)},
        "Measurement methodology (energy)": energy_method(row),
        "co2e_location_t": Q.of(row["co2e_kg"], "kg").to("t"),
        # not available stays None (the Markdown says so): 0 t would be a figure the job never had
        "co2e_market_t": None if row["co2e_market_kg"] is None else Q.of(row["co2e_market_kg"], "kg").to("t"),
        "ghg_scope": ghg_scope(row),
        "assumption_ids": row["assumption_ids"],
    }


def pue(row: dict[str, Any]) -> dict[str, Any] | None:
    """The PUE the IT energy was scaled by (facility over IT energy, both the mart's), with the
    range and coefficient ids of the zones' PUEs: an assumption, as nothing here meters the building."""
    if not row.get("it_energy_kwh") or None in (row.get("pue"), row.get("pue_low"), row.get("pue_high")):
        return None
    return {"value": row["pue"], "low": row["pue_low"], "high": row["pue_high"], "assumption_ids": row["pue_ids"]}


def energy_method(row: dict[str, Any]) -> str:
    """How the energy was reached: which part was measured, and that the facility overhead on top
    of it is an assumed PUE, with its id and range."""
    it = {"measured": "measured IT energy: DCGM GPU energy counters on every GPU-hour",
          "estimated": "IT energy estimated in part: GPU-hours without telemetry at an assumed share of TDP",
          "uncovered": f"incomplete: no GPU time was found for the job in {row.get('uncovered_months') or 'the period'}, "
                       "so that energy is not in the figure; the rest is IT energy from DCGM or billed GPU-hours"}
    p = pue(row)
    facility = ("times an assumed PUE (not measured) of {value:.2f}, range {low:.2f} to {high:.2f} ({ids}), for the data "
                "centre's overhead").format(**p, ids=", ".join(p["assumption_ids"])) if p else "times the data centre's PUE"
    return f"{it.get(row['energy_tier'], row['energy_tier'])}, {facility}; range over the PUE and power assumptions"


def _magnitude(x: float | None) -> str:
    return f"1e{math.floor(math.log10(x))}" if x else "N/A"


def markdown(name: str, form: dict[str, Any], score: dict[str, Any]) -> str:
    t, c, e = form["Training time"], form["Amount of computation used for training"], form["Amount of energy used for training"]
    lines = [f"# {name}: compute and energy (AI Act Annex XI 2(d)-(e))", "",
             f"- Training time: {t['wall_clock_days']:.2f} days wall clock ({t['band']}), {t['hardware_days']:.2f} "
             f"hardware-days on {t['hardware']}, {t['from']} to {t['to']}",
             f"- Amount of computation used for training: {c['written']} FLOP",
             f"- Measurement methodology: {form['Measurement methodology (computation)']}",
             f"- Amount of energy used for training: {e['written']} MWh (range {e['mwh_low']:.2e} to {e['mwh_high']:.2e}), {e['tier']}",
             f"- Measurement methodology: {form['Measurement methodology (energy)']}",
             f"- CO2e: {form['co2e_location_t']:.4f} t location-based, "
             + ("market-based not available (no market-based factor for a zone it ran in)" if form["co2e_market_t"] is None
                else f"{form['co2e_market_t']:.4f} t market-based"),
             f"- GHG Protocol scope: electricity {form['ghg_scope']['electricity']}, embodied {form['ghg_scope']['embodied']} "
             f"({form['ghg_scope']['ownership']} GPUs). {SCOPE_RULE}", "",
             "## SCI (ISO/IEC 21031:2024): SCI = (E x I + M) per R", ""]
    if "I" in score:
        lines.append(f"E = {score['E']['value']:.4f} kWh; I = {score['I']['value']:.2f} g CO2e/kWh; M = {score['M']['value']:.2f} g CO2e")
        lines += ["", f"I: {score['I']['basis']}."]
    lines += ["", f"Software boundary. In: {'; '.join(score['boundary']['included'])}. "
                  f"Out: {'; '.join(score['boundary']['excluded'])}."]
    lines += ["", "| functional unit | R | SCI | low | high | unit |", "|---|---|---|---|---|---|"]
    lines += [f"| {s['functional_unit']} | {s['R']:.6g} | {s['value']:.4g} | {s['low']:.4g} | {s['high']:.4g} | {s['unit']} |"
              for s in score["scores"]]
    return "\n".join(lines) + "\n"


def write_disclosure(con: duckdb.DuckDBPyConnection, months: tuple[str, str], job: str | None, model: str | None,
                     fmt: str, out: Path) -> list[Path]:
    row = subject(con, months, job, model)
    name = model or job or ""
    doc_id = f"urn:meterbook:disclosure:{name}:{months[0]}..{months[1]}"
    out.mkdir(parents=True, exist_ok=True)
    stem = out / name
    if fmt == "ai-act":
        if row["workload"] != "training":
            raise InputError(Path("job_disclosure_month"), f"job {job} is a {row['workload']} job, not training",
                             f"months {months[0]} to {months[1]}",
                             "Annex XI 2(d)-(e) asks for the computation and energy of training: name a training job or --model")
        form = ai_act(row)
        return [write_text(Path(f"{stem}.ai-act.json"), json.dumps(form, indent=2, default=str) + "\n"),
                write_text(Path(f"{stem}.ai-act.md"), markdown(name, form, sci(row)))]
    if fmt == "sci":
        return [write_text(Path(f"{stem}.sci.json"), json.dumps(sci(row), indent=2) + "\n")]
    doc = checked(spdx(row, doc_id), "spdx-3.0.1") if fmt == "spdx" else checked(cyclonedx(row, doc_id), "cyclonedx-1.6")
    return [write_text(Path(f"{stem}.{'spdx' if fmt == 'spdx' else 'cdx'}.json"), json.dumps(doc, indent=2) + "\n")]


def checked(doc: dict[str, Any], schema: str) -> dict[str, Any]:
    """The document, once it satisfies its format's published schema. A document that does not is
    meterbook's bug, not the user's: it stops before anything is written."""
    errors = schema_errors(doc, schema)
    if errors:
        raise RuntimeError(f"the {schema} document fails its published schema: " + "; ".join(errors[:5]))
    return doc


RECONCILIATION_COLUMNS = ("provider", "month", "account_id", "payer_account_id", "service", "region", "model_version",
                          "provider_co2e_location_kg", "co2e_kg_low", "co2e_kg", "co2e_kg_high", "difference_location_kg",
                          "location_in_range", "provider_co2e_market_kg", "co2e_market_kg_low", "co2e_market_kg",
                          "co2e_market_kg_high", "difference_market_kg", "market_in_range", "gap_class", "finding")


def write_provider_carbon(con: duckdb.DuckDBPyConnection, month: str, out: Path) -> Path:
    """The month's provider_carbon_reconciliation rows as a CSV, line by line."""
    out.mkdir(parents=True, exist_ok=True)
    query = (f"select {', '.join(RECONCILIATION_COLUMNS)} from provider_carbon_reconciliation where month = ? "
             "order by provider, account_id, service, region")
    return copy_csv(con, query, [month], out / f"provider-carbon-{month}.csv")
