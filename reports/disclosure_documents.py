"""The SBOM-format disclosures of a job's or model's energy: SPDX 3.0.1 (an ai_AIPackage with
what the AI profile requires of one) and CycloneDX 1.6 (a machine-learning-model component's
modelCard energy), each built from a job_disclosure_month row as `reports.disclosure.subject`
sums it. The warehouse knows the energy, not the model's supplier, version or licence: the
documents assert no more than it knows."""
from __future__ import annotations

import uuid
from typing import Any

from core.quantity import Q

# who owns the GPUs and the GHG scopes that puts the CO2e in (job_disclosure_month)
SCOPE_COLUMNS = ("ownership", "electricity_scope", "embodied_scope")
# SPDX 3.0.1 ai_EnergyConsumption's property for each activity (CycloneDX 1.6 names the same activities)
SPDX_ENERGY = {"training": "ai_trainingEnergyConsumption", "inference": "ai_inferenceEnergyConsumption"}
NOASSERTION = "NOASSERTION"   # SPDX's word for a value the document's creator does not know
NAMESPACE = uuid.UUID("6f1c1f0e-4d1a-5b8e-9a53-6d6574657262")   # uuid5 namespace of meterbook's documents


def spdx(row: dict[str, Any], doc_id: str) -> dict[str, Any]:
    """An ai_AIPackage with what the AI profile asks of one (suppliedBy, downloadLocation,
    packageVersion, primaryPurpose; one declared and one concluded licence relationship). The
    warehouse knows the model's energy, not its supplier, version, download location, release or
    licence: those say NOASSERTION (releaseTime, a date with no such value, is left out), and the
    period the figures cover is an annotation, never a version."""
    kwh, pkg, info = row["facility_energy_kwh"], f"{doc_id}#model", "_:creationinfo"
    return {"@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld", "@graph": [
        {"type": "CreationInfo", "@id": info, "specVersion": "3.0.1", "created": _created(row),
         "createdBy": [f"{doc_id}#meterbook"]},
        # createdBy takes an Agent: meterbook writes the document as a software agent
        {"type": "SoftwareAgent", "spdxId": f"{doc_id}#meterbook", "creationInfo": info, "name": "meterbook"},
        # suppliedBy must name an Agent, and SPDX 3 has no NOASSERTION agent: one named so
        {"type": "Agent", "spdxId": f"{doc_id}#supplier", "creationInfo": info, "name": NOASSERTION,
         "comment": "the model's supplier: not in the billing, telemetry or work log meterbook reads"},
        {"type": "ai_AIPackage", "spdxId": pkg, "creationInfo": info, "name": row["jobs"],
         "suppliedBy": f"{doc_id}#supplier", "software_downloadLocation": NOASSERTION,
         "software_packageVersion": NOASSERTION, "software_primaryPurpose": "model",
         "comment": f"energy {row['energy_tier']}, facility kWh range {row['facility_energy_kwh_low']:.6g} to "
                    f"{row['facility_energy_kwh_high']:.6g}; CO2e {row['co2e_kg']:.6g} kg (location-based), "
                    f"GHG Protocol {row['electricity_scope']} ({row['ownership']} GPUs)",
         "ai_energyConsumption": {"type": "ai_EnergyConsumption", SPDX_ENERGY[_activity(row)]: [
             {"type": "ai_EnergyConsumptionDescription", "ai_energyQuantity": f"{kwh:.6f}", "ai_energyUnit": "kilowattHour"}]}},
        *({"type": "Relationship", "spdxId": f"{doc_id}#{kind}", "creationInfo": info, "from": pkg, "relationshipType": kind,
           "to": ["expandedlicensing_NoAssertionLicense"]} for kind in ("hasDeclaredLicense", "hasConcludedLicense")),
        {"type": "Annotation", "spdxId": f"{doc_id}#period", "creationInfo": info, "annotationType": "other", "subject": pkg,
         "statement": f"The energy is that of the work log's {'training' if _activity(row) == 'training' else 'serving'} "
                      f"job(s) {row['jobs']} over {row['first_month']} to {row['last_month']}"
                      + (f", GPU time from {_stamp(row['start_utc'])} to {_stamp(row['end_utc'])}." if row["start_utc"] else ".")},
    ]}


def cyclonedx(row: dict[str, Any], doc_id: str) -> dict[str, Any]:
    props = [{"name": f"meterbook:{c}", "value": f"{row[c]:.6f}"} for c in
             ("facility_energy_kwh_low", "facility_energy_kwh_high", "co2e_kg_low", "co2e_kg_high")]
    props.append({"name": "meterbook:energy_tier", "value": row["energy_tier"]})
    props += [{"name": f"meterbook:{c}", "value": row[c] or "unknown"} for c in SCOPE_COLUMNS]
    return {"bomFormat": "CycloneDX", "specVersion": "1.6", "serialNumber": f"urn:uuid:{uuid.uuid5(NAMESPACE, doc_id)}",
            "version": 1, "metadata": {"timestamp": _created(row), "tools": {"components": [{"type": "application", "name": "meterbook"}]}},
            "components": [{"type": "machine-learning-model", "bom-ref": "model", "name": row["jobs"], "modelCard": {
                "considerations": {"environmentalConsiderations": {"energyConsumptions": [{
                    "activity": _activity(row),
                    # the organisation that supplied the energy where an input names it (the provider billing
                    # rented or colocated GPUs); none named, the list stays empty, as the schema allows
                    "energyProviders": [{"organization": {"name": provider}, "energySource": "unknown",
                                         "energyProvided": {"value": row["facility_energy_kwh"], "unit": "kWh"}}
                                        for provider in filter(None, [row.get("energy_provider")])],
                    "activityEnergyCost": {"value": row["facility_energy_kwh"], "unit": "kWh"},
                    "co2CostEquivalent": {"value": Q.of(row["co2e_kg"], "kg").to("t"), "unit": "tCO2eq"},
                    "properties": props}]}}}}]}


def _activity(row: dict[str, Any]) -> str:
    """The lifecycle activity the energy was spent on: a serving job's is inference, never training."""
    return "training" if row["workload"] == "training" else "inference"


def _created(row: dict[str, Any]) -> str:
    # the document's date is the data's (the end of the job's last window): the same bytes on every run
    return _stamp(row["end_utc"] or f"{row['last_month']}-01")


def _stamp(t: Any) -> str:
    """An xsd:dateTime in UTC; a bare date is its midnight."""
    text = str(t).replace(" ", "T")[:19]
    return f"{text}{'T00:00:00' if len(text) == 10 else ''}Z"
