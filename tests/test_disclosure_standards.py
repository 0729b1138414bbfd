"""The disclosure forms say what their standards ask, no more and no less: SPDX 3.0.1's AI profile
gets every field it requires, NOASSERTION where the warehouse does not know the value; the AI Act
form says its facility overhead is an assumed PUE; a period's energy tier is its weakest month's;
CycloneDX names the organisation that supplied the energy, or none. (SCI's intensity and boundary,
which need the demo's grid-hourly series, are tested in test_disclosure_forms.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.disclosure import SUMMED, ai_act, subject, write_disclosure
from sources.json_schemas import schema_errors
from tests.disclosure_tables import job_disclosure_table

ROW = {"workload": "training", "params": 1.1e9, "gpu_models": "H100-SXM5-80GB", "gpus": 8, "start_utc": "2026-10-14 00:00:00",
       "end_utc": "2026-10-15 00:00:00", "energy_tier": "measured", "assumption_ids": ["pue:aws:us-east-1:hyperscale"],
       "ownership": "cloud", "electricity_scope": "Scope 3, category 1", "embodied_scope": "Scope 3, category 1",
       "pue_low": 1.12, "pue_high": 1.2, "pue_ids": ["pue:aws:us-east-1:hyperscale"], "energy_provider": "AWS"}


def insert(con, month: str, job: str = "j", **over) -> None:
    row = ROW | {c: 10.0 for c in SUMMED} | {"it_energy_kwh": 8.0, "facility_energy_kwh": 9.2, "pue": 1.15} | over
    row |= {"month": month, "job_id": job}
    con.execute(f"insert into job_disclosure_month ({', '.join(row)}) values ({', '.join('?' for _ in row)})", list(row.values()))


def _doc(con, tmp_path: Path, fmt: str, months=("2026-10", "2026-10"), job: str = "j") -> dict:
    (path, *_) = write_disclosure(con, months, job, None, fmt, tmp_path)
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_spdx_package_has_what_the_ai_profile_requires_and_claims_nothing_the_warehouse_does_not_know(tmp_path):
    """SPDX 3.0.1's AI profile requires suppliedBy, downloadLocation, packageVersion and one declared
    and one concluded licence per AIPackage. The warehouse knows none of them: each says NOASSERTION.
    Before, the package had no supplier, location or licence, its version was the reporting period
    ('2026-09..2026-10') and its release time the job's end: a signer would have filed a model
    version and a release date nobody set."""
    con = job_disclosure_table()
    insert(con, "2026-09", start_utc="2026-09-28 00:00:00", end_utc="2026-09-30 00:00:00")
    insert(con, "2026-10")
    doc = _doc(con, tmp_path, "spdx", ("2026-09", "2026-10"))
    assert schema_errors(doc, "spdx-3.0.1") == []
    graph = {e.get("spdxId", e.get("@id")): e for e in doc["@graph"]}
    pkg = next(e for e in doc["@graph"] if e["type"] == "ai_AIPackage")
    supplier = graph[pkg["suppliedBy"]]
    assert supplier["type"] in {"Agent", "Organization", "Person", "SoftwareAgent"} and supplier["name"] == "NOASSERTION"
    assert pkg["software_downloadLocation"] == pkg["software_packageVersion"] == "NOASSERTION"
    assert pkg["software_primaryPurpose"] == "model"
    assert "releaseTime" not in pkg and "builtTime" not in pkg
    for kind in ("hasDeclaredLicense", "hasConcludedLicense"):
        (rel,) = [e for e in doc["@graph"] if e["type"] == "Relationship" and e["relationshipType"] == kind]
        assert rel["from"] == pkg["spdxId"] and rel["to"] == ["expandedlicensing_NoAssertionLicense"]
    (note,) = [e for e in doc["@graph"] if e["type"] == "Annotation"]
    assert note["subject"] == pkg["spdxId"] and "2026-09 to 2026-10" in note["statement"]
    assert "2026-09-28T00:00:00Z to 2026-10-15T00:00:00Z" in note["statement"]
    # the period is the annotation's: in no field of the package but the document's ids
    assert not [k for k, v in pkg.items() if "2026-09" in json.dumps(v) and k not in ("spdxId", "suppliedBy")]


def test_the_ai_act_energy_method_says_the_pue_is_assumed(tmp_path):
    """'Measured' is the GPUs' energy; the data centre's overhead on top of it is an assumed PUE.
    Before, the method read 'measured ... times the data centre's PUE', and a signer would have
    filed the facility energy as measured with no word that 15 % of it rests on an assumption."""
    con = job_disclosure_table()
    insert(con, "2026-10")
    form = _doc(con, tmp_path, "ai-act")
    method = form["Measurement methodology (energy)"]
    assert method.startswith("measured IT energy")
    assert "assumed PUE (not measured) of 1.15, range 1.12 to 1.20 (pue:aws:us-east-1:hyperscale)" in method
    energy = form["Amount of energy used for training"]
    assert energy["pue"] == {"value": 1.15, "low": 1.12, "high": 1.2, "assumption_ids": ["pue:aws:us-east-1:hyperscale"]}
    md = (tmp_path / "j.ai-act.md").read_text(encoding="utf-8")
    assert "assumed PUE (not measured) of 1.15" in md


@pytest.mark.parametrize(("tiers", "expected"), [
    (("uncovered", "measured"), "uncovered"), (("measured", "uncovered"), "uncovered"),
    (("estimated", "uncovered"), "uncovered"), (("measured", "estimated"), "estimated"), (("measured", "measured"), "measured")])
def test_a_periods_energy_tier_is_its_weakest_months(tiers, expected):
    """One month with no GPU time found leaves that month's energy out of the period's sum. Before,
    a measured month beside an uncovered one rated the period 'measured', and a signer would have
    filed an incomplete sum as measured."""
    con = job_disclosure_table()
    for month, tier in zip(("2026-09", "2026-10"), tiers):
        insert(con, month, energy_tier=tier)
    row = subject(con, ("2026-09", "2026-10"), "j", None)
    assert row["energy_tier"] == expected
    method = ai_act(row)["Measurement methodology (energy)"]
    if expected == "uncovered":
        month = "2026-09" if tiers[0] == "uncovered" else "2026-10"
        assert method.startswith(f"incomplete: no GPU time was found for the job in {month}")
    assert not method.startswith("measured") or expected == "measured"


def test_cyclonedx_names_the_organisation_that_supplied_the_energy_or_none(tmp_path):
    """energyProviders[].organization is an organisation: the provider billing the rented GPUs.
    Where no input names it (owned GPUs, or several providers over the period), the list is
    empty, as the schema allows. Before, it held the phrase "the data centres' grid supply
    (location-based)", which a signer would have filed as the name of their energy supplier."""
    con = job_disclosure_table()
    insert(con, "2026-09")
    insert(con, "2026-10")
    insert(con, "2026-10", job="owned", energy_provider=None, ownership="on-premises")
    insert(con, "2026-09", job="moved", energy_provider="AWS")
    insert(con, "2026-10", job="moved", energy_provider="GCP")

    def providers(job: str, months=("2026-09", "2026-10")) -> list:
        doc = _doc(con, tmp_path, "cyclonedx", months, job)
        assert schema_errors(doc, "cyclonedx-1.6") == []
        (use,) = doc["components"][0]["modelCard"]["considerations"]["environmentalConsiderations"]["energyConsumptions"]
        assert use["activityEnergyCost"] == {"value": pytest.approx(9.2 * len(range(int(months[0][-2:]), int(months[1][-2:]) + 1))),
                                             "unit": "kWh"}
        return use["energyProviders"]

    (aws,) = providers("j")
    assert aws["organization"] == {"name": "AWS"} and aws["energyProvided"] == {"value": pytest.approx(18.4), "unit": "kWh"}
    assert providers("owned", ("2026-10", "2026-10")) == []
    assert providers("moved") == []
