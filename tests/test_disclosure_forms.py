"""The disclosures a trainer files (AI Act Annex XI, SPDX 3.0.1 AI, CycloneDX 1.6, SCI) carry the
marts' energy and CO2e with their ranges; every per-unit figure is its numerator over its
denominator, in the unit it says; the clouds' own carbon exports reconcile line by line.

The SPDX and CycloneDX documents are validated against their formats' published JSON schemas
(SPDX 3.0.1, CycloneDX 1.6; vendored in sources/reference/schemas, references resolved there)
before they are written.
"""
from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from core.quantity import Q, UnitError
from pipelines.cli import main
from sources.json_schemas import schema_errors
from tests.pdf_helpers import cli

DATA = Path(__file__).parent / "data" / "provider_carbon"
JOB = "acme-embed-1b-pretrain"
CDX_ACTIVITIES = {"design", "data-collection", "data-preparation", "training", "fine-tuning", "validation", "deployment",
                  "inference", "other"}
CDX_SOURCES = {"coal", "oil", "natural-gas", "nuclear", "wind", "solar", "geothermal", "hydropower", "biofuel", "unknown", "other"}


def test_the_gsf_worked_example_is_130_g_per_million_tokens_not_0_13():
    """6,500 kg over 50 billion tokens: 6.5e6 g / 5e4 million tokens = 130 g per million tokens
    (the GSF draft's 0.13 g is a factor of 1,000 off, kg taken for g)."""
    score = (Q.of(6500, "kg") / Q.of(50e9, "token")).to("g/Mtok")
    assert score == pytest.approx(130.0)
    assert score != pytest.approx(0.13)


@given(kg=st.floats(1e-6, 1e9), tokens=st.floats(1.0, 1e15), requests=st.floats(1.0, 1e12))
def test_a_per_unit_figure_is_its_numerator_over_its_denominator_in_any_unit(kg, tokens, requests):
    per_token = Q.of(kg, "kg") / Q.of(tokens, "token")
    assert per_token.to("g/Mtok") == pytest.approx(kg * 1000 / (tokens / 1e6), rel=1e-12)
    assert per_token.to("kg/token") == pytest.approx(kg / tokens, rel=1e-12)
    assert (Q.of(kg, "kg") / Q.of(requests, "request")).to("g/krequest") == pytest.approx(kg * 1000 / (requests / 1e3), rel=1e-12)


def test_units_that_do_not_match_are_refused():
    with pytest.raises(UnitError):
        Q.of(1, "kg") + Q.of(1, "kWh")
    with pytest.raises(UnitError):
        (Q.of(1, "kg") / Q.of(1, "token")).to("g/krequest")
    assert (Q.of(100, "kWh") * Q.of(322, "g/kWh")).to("kg") == pytest.approx(32.2)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("disclosure")
    d, wh, out = root / "demo", root / "wh.duckdb", root / "out"
    cli("demo", "--month", "2026-10", "--out", str(d))
    cli("ingest", str(d / "billing"), str(d / "dcgm"), str(d / "work"), str(d / "grid"), str(d / "instruments"),
        str(DATA / "aws_carbon_emissions_demo_2026-10.csv"), str(DATA / "gcp_carbon_footprint_2026-10.jsonl"),
        "--warehouse", str(wh))
    for fmt in ("ai-act", "spdx", "cyclonedx", "sci"):
        cli("report", "disclosure", "--month", "2026-10", "--job", JOB, "--format", fmt, "--out", str(out),
            "--warehouse", str(wh), "--config", str(d / "meterbook.toml"))
    con = duckdb.connect(str(wh), read_only=True)
    cur = con.execute("select * from job_disclosure_month where job_id = ?", [JOB])
    mart = dict(zip([c[0] for c in cur.description], cur.fetchone()))
    job_month = con.execute("select sum(facility_energy_kwh), sum(co2e_kg) from job_month where job_id = ?", [JOB]).fetchone()
    recon = con.execute("select * from provider_carbon_reconciliation order by all").df()
    con.close()
    return {"out": out, "mart": mart, "job_month": job_month, "recon": recon, "wh": wh, "root": root,
            "config": str(d / "meterbook.toml")}


def read(demo: dict, suffix: str) -> dict:
    return json.loads((demo["out"] / f"{JOB}.{suffix}").read_text(encoding="utf-8"))


def test_the_forms_carry_the_marts_energy_and_co2e(demo):
    m = demo["mart"]
    assert m["energy_tier"] == "measured" and m["facility_energy_kwh"] > 0
    assert (m["facility_energy_kwh"], m["co2e_kg"]) == pytest.approx(demo["job_month"], rel=1e-12)
    assert m["facility_energy_kwh_low"] < m["facility_energy_kwh"] < m["facility_energy_kwh_high"]
    form = read(demo, "ai-act.json")
    energy = form["Amount of energy used for training"]
    assert energy["mwh"] * 1000 == pytest.approx(m["facility_energy_kwh"])
    assert (energy["mwh_low"] * 1000, energy["mwh_high"] * 1000) == pytest.approx(
        (m["facility_energy_kwh_low"], m["facility_energy_kwh_high"]))
    assert form["Amount of computation used for training"]["flop"] == pytest.approx(m["work_flops"])
    assert form["co2e_location_t"] * 1000 == pytest.approx(m["co2e_kg"])
    pkg = next(e for e in read(demo, "spdx.json")["@graph"] if e["type"] == "ai_AIPackage")
    (desc,) = pkg["ai_energyConsumption"]["ai_trainingEnergyConsumption"]
    assert float(desc["ai_energyQuantity"]) == pytest.approx(m["facility_energy_kwh"], rel=1e-6)
    (use,) = read(demo, "cdx.json")["components"][0]["modelCard"]["considerations"]["environmentalConsiderations"]["energyConsumptions"]
    assert use["activityEnergyCost"]["value"] == pytest.approx(m["facility_energy_kwh"])
    assert use["co2CostEquivalent"]["value"] * 1000 == pytest.approx(m["co2e_kg"])
    ranges = {p["name"]: float(p["value"]) for p in use["properties"] if p["name"].endswith(("_low", "_high"))}
    assert ranges["meterbook:co2e_kg_low"] < m["co2e_kg"] < ranges["meterbook:co2e_kg_high"]


def test_the_forms_name_the_scope_of_rented_cloud_gpus(demo):
    """The demo's job ran on AWS instances: a purchased service, so its electricity and embodied
    CO2e are the customer's Scope 3 category 1, never Scope 2, in every form that carries CO2e."""
    m = demo["mart"]
    assert (m["ownership"], m["electricity_scope"], m["embodied_scope"]) == ("cloud", "Scope 3, category 1", "Scope 3, category 1")
    for scope in (read(demo, "ai-act.json")["ghg_scope"], read(demo, "sci.json")["ghg_scope"]):
        assert scope["electricity"] == scope["embodied"] == "Scope 3, category 1" and scope["ownership"] == "cloud"
        assert "purchased goods and services" in scope["rule"]
    md = (demo["out"] / f"{JOB}.ai-act.md").read_text(encoding="utf-8")
    assert "GHG Protocol scope: electricity Scope 3, category 1, embodied Scope 3, category 1 (cloud GPUs)" in md
    (use,) = read(demo, "cdx.json")["components"][0]["modelCard"]["considerations"]["environmentalConsiderations"]["energyConsumptions"]
    assert {"name": "meterbook:electricity_scope", "value": "Scope 3, category 1"} in use["properties"]
    pkg = next(e for e in read(demo, "spdx.json")["@graph"] if e["type"] == "ai_AIPackage")
    assert "GHG Protocol Scope 3, category 1 (cloud GPUs)" in pkg["comment"]


def test_scopes_config_makes_the_same_gpus_owned(demo, tmp_path):
    """[scopes] providers: the same instances declared on-premises put the job's electricity in
    Scope 2 and its amortised embodied CO2e in no scope (beside the inventory, not Scope 3 category 2,
    which counts acquisitions whole); the figures themselves do not move."""
    config = tmp_path / "meterbook.toml"
    config.write_text(Path(demo["config"]).read_text(encoding="utf-8") + '\n[scopes]\nproviders = { "AWS" = "on-premises" }\n',
                      encoding="utf-8")
    out = tmp_path / "out"
    cli("report", "disclosure", "--month", "2026-10", "--job", JOB, "--format", "sci", "--out", str(out),
        "--warehouse", str(demo["wh"]), "--config", str(config))
    scope = json.loads((out / f"{JOB}.sci.json").read_text(encoding="utf-8"))["ghg_scope"]
    assert (scope["electricity"], scope["embodied"], scope["ownership"]) == ("Scope 2", "not in a scope (an amortised share, reported beside the inventory)", "on-premises")
    with duckdb.connect(str(demo["wh"]), read_only=True) as con:
        split = con.execute("select ownership, electricity_scope, ownership_source, sum(co2e_kg) from scope_month "
                            "where month = '2026-10' group by all").fetchall()
        total = con.execute("select sum(co2e_kg) from team_month where month = '2026-10'").fetchone()[0]
        # owned GPUs draw a utility's electricity, and no input names it: CycloneDX names no provider
        provider = con.execute("select energy_provider from job_disclosure_month where job_id = ?", [JOB]).fetchone()[0]
    assert [s[:3] for s in split] == [("on-premises", "Scope 2", "meterbook.toml [scopes] providers")]
    assert provider is None and demo["mart"]["energy_provider"] == "AWS"
    assert split[0][3] == pytest.approx(total, rel=1e-6)
    cli("report", "disclosure", "--month", "2026-10", "--job", JOB, "--format", "sci", "--out", str(out),
        "--warehouse", str(demo["wh"]), "--config", demo["config"])   # the module's other tests read the demo's build


def test_the_audit_files_owned_gpus_embodied_beside_the_inventory_not_as_capital_goods(demo, tmp_path):
    """Owned GPUs' embodied CO2e is amortised by GPU-hour: page 1 filed that monthly share as
    'Scope 3, category 2: embodied (capital goods)', and a user signing it misreported category 2,
    which the GHG Protocol counts whole in the year the hardware is acquired. Page 1 shows the share
    beside the inventory and says category 2 is not computed (no input holds the acquisitions)."""
    from pypdf import PdfReader
    config = tmp_path / "meterbook.toml"
    config.write_text(Path(demo["config"]).read_text(encoding="utf-8") + '\n[scopes]\nproviders = { "AWS" = "on-premises" }\n',
                      encoding="utf-8")
    out = tmp_path / "audit"
    try:
        cli("report", "audit", "--month", "2026-10", "--warehouse", str(demo["wh"]), "--config", str(config), "--out", str(out))
    finally:   # the module's other tests read the demo's build
        cli("report", "disclosure", "--month", "2026-10", "--job", JOB, "--format", "sci", "--out", str(tmp_path / "x"),
            "--warehouse", str(demo["wh"]), "--config", demo["config"])
    pdf = PdfReader(out / "audit.pdf")
    page1 = " ".join(pdf.pages[0].extract_text().split())
    assert "Scope 3, category 2: embodied" not in page1
    assert "Embodied, amortised over the hardware life: an allocation to use, beside the inventory" in page1
    assert "Scope 3, category 2: capital goods acquired" in page1 and "not computed: it needs the GPUs and servers" in page1
    statement = json.loads(pdf.attachments["statement.json"][0])
    lines = {x["label"].split(":")[0]: x for x in statement["scopes"]}
    assert lines["Scope 3, category 2"]["value"] is None and lines["Embodied, amortised over the hardware life"]["value"] > 0
    assert lines["Embodied, amortised over the hardware life"]["scope"] == \
        "not in a scope (an amortised share, reported beside the inventory)"


def test_spdx_document_has_what_spdx_3_requires(demo):
    doc = read(demo, "spdx.json")
    assert doc["@context"] == "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"
    info = next(e for e in doc["@graph"] if e["type"] == "CreationInfo")
    assert info["specVersion"] == "3.0.1" and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", info["created"])
    agents = {e["spdxId"] for e in doc["@graph"] if e["type"] in {"Agent", "Person", "Organization", "SoftwareAgent"}}
    assert info["createdBy"] and set(info["createdBy"]) <= agents     # createdBy names Agents
    for element in (e for e in doc["@graph"] if e["type"] != "CreationInfo"):
        assert element["spdxId"] and element["creationInfo"] == info["@id"]
    pkg = next(e for e in doc["@graph"] if e["type"] == "ai_AIPackage")
    (desc,) = pkg["ai_energyConsumption"]["ai_trainingEnergyConsumption"]
    assert desc["type"] == "ai_EnergyConsumptionDescription"
    assert desc["ai_energyUnit"] in {"kilowattHour", "megajoule", "other"}
    Decimal(desc["ai_energyQuantity"])                     # an xsd:decimal lexical form


def test_cyclonedx_document_has_what_cyclonedx_1_6_requires(demo):
    doc = read(demo, "cdx.json")
    assert (doc["bomFormat"], doc["specVersion"], doc["version"]) == ("CycloneDX", "1.6", 1)
    assert re.fullmatch(r"urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", doc["serialNumber"])
    (component,) = doc["components"]
    assert component["type"] == "machine-learning-model"
    for use in component["modelCard"]["considerations"]["environmentalConsiderations"]["energyConsumptions"]:
        assert {"activity", "energyProviders", "activityEnergyCost"} <= set(use)
        assert use["activity"] in CDX_ACTIVITIES
        assert use["activityEnergyCost"]["unit"] == "kWh" and use["co2CostEquivalent"]["unit"] == "tCO2eq"
        for provider in use["energyProviders"]:
            assert {"organization", "energySource", "energyProvided"} <= set(provider)
            assert provider["energySource"] in CDX_SOURCES and provider["energyProvided"]["unit"] == "kWh"


@pytest.mark.parametrize(("suffix", "fmt"), [("cdx.json", "cyclonedx-1.6"), ("spdx.json", "spdx-3.0.1")])
def test_every_document_the_demo_writes_satisfies_its_published_schema(demo, suffix, fmt):
    docs = sorted(demo["out"].glob(f"*.{suffix}"))
    assert docs
    for path in docs:
        assert schema_errors(json.loads(path.read_text(encoding="utf-8")), fmt) == [], path.name


def test_the_vendored_spdx_schema_is_the_published_file():
    """The copy is the one the schemas README names by sha256, and a valid draft 2020-12 schema."""
    import hashlib

    from jsonschema.validators import validator_for

    from sources.json_schemas import SCHEMA_DIR, SCHEMAS
    path = SCHEMA_DIR / SCHEMAS["spdx-3.0.1"]
    assert f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}" in (SCHEMA_DIR / "README.md").read_text(encoding="utf-8")
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    validator_for(schema).check_schema(schema)


def _spdx_package(doc: dict) -> dict:
    return next(e for e in doc["@graph"] if e["type"] == "ai_AIPackage")


def test_the_schema_check_finds_what_spdx_3_0_1_forbids(demo):
    """Each mutation breaks a rule of SPDX's published 3.0.1 schema."""
    cases = {"type": lambda d: _spdx_package(d).update(type="ai_AIModel"),
             "creationInfo": lambda d: _spdx_package(d).pop("creationInfo"),
             "created": lambda d: next(e for e in d["@graph"] if e["type"] == "CreationInfo").pop("created"),
             "energyUnit": lambda d: _spdx_package(d)["ai_energyConsumption"]["ai_trainingEnergyConsumption"][0].update(
                 ai_energyUnit="kWh"),
             "energyQuantity": lambda d: _spdx_package(d)["ai_energyConsumption"]["ai_trainingEnergyConsumption"][0].update(
                 ai_energyQuantity="1.2e3"),
             "primaryPurpose": lambda d: _spdx_package(d).update(software_primaryPurpose="weights"),
             "@context": lambda d: d.update({"@context": "https://spdx.org/rdf/3.0.0/spdx-context.jsonld"})}
    for name, mutate in cases.items():
        doc = read(demo, "spdx.json")
        mutate(doc)
        errors = schema_errors(doc, "spdx-3.0.1")
        assert errors, name
        assert all(len(e) < 1000 for e in errors), name       # a failed oneOf names a place, not the whole document


def test_the_schema_check_finds_what_cyclonedx_1_6_forbids(demo):
    """Each mutation breaks a rule of the published schema, one of them in the SPDX licence list
    it references by file name: the references resolve from the vendored copies."""
    doc = read(demo, "cdx.json")
    use = doc["components"][0]["modelCard"]["considerations"]["environmentalConsiderations"]["energyConsumptions"][0]
    cases = {"activity": lambda: use.pop("activity"),
             "unit": lambda: use["co2CostEquivalent"].update(unit="kgCO2eq"),
             "license": lambda: doc["components"][0].update(licenses=[{"license": {"id": "not-a-licence"}}]),
             "bomFormat": lambda: doc.update(bomFormat="SPDX")}
    for name, mutate in cases.items():
        original = json.dumps(doc)
        mutate()
        assert schema_errors(doc, "cyclonedx-1.6"), name
        doc = json.loads(original)
        use = doc["components"][0]["modelCard"]["considerations"]["environmentalConsiderations"]["energyConsumptions"][0]


SPDX_CONTEXT = "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"
SPDX_INFO = {"type": "CreationInfo", "@id": "_:ci", "specVersion": "3.0.1", "created": "2026-10-31T00:00:00Z",
             "createdBy": ["urn:x:agent"]}
BROKEN = {
    "cyclonedx": {"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"type": "model"}]},
    "spdx": {"@context": SPDX_CONTEXT, "@graph": [SPDX_INFO, {"type": "ai_AIModel", "spdxId": "urn:x:m", "creationInfo": "_:ci"}]},
    "spdx-no-creationInfo": {"@context": SPDX_CONTEXT, "@graph": [SPDX_INFO, {"type": "ai_AIPackage", "spdxId": "urn:x:m"}]},
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_document_that_fails_its_schema_is_not_written(tmp_path, monkeypatch, case):
    import reports.disclosure as disclosure
    fmt = case.split("-")[0]
    monkeypatch.setattr(disclosure, fmt, lambda row, doc_id: BROKEN[case])
    monkeypatch.setattr(disclosure, "subject", lambda *a: {})
    with pytest.raises(RuntimeError, match="fails its published schema"):
        disclosure.write_disclosure(None, ("2026-10", "2026-10"), JOB, None, fmt, tmp_path)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_each_sci_figure_is_its_numerator_over_its_denominator(demo):
    m, sci = demo["mart"], read(demo, "sci.json")
    assert sci["E"]["value"] == pytest.approx(m["facility_energy_kwh"])
    assert sci["M"] == {"value": pytest.approx(m["embodied_co2e_kg"] * 1000), "unit": "g CO2e"} and m["embodied_co2e_kg"] > 0
    # E x I is the operational CO2e, hour by hour: I = CO2e / E in g per kWh
    assert sci["I"]["value"] == pytest.approx(m["co2e_hourly_kg"] * 1000 / m["facility_energy_kwh"])
    scores = {s["functional_unit"]: s for s in sci["scores"]}
    run, per_mtok = scores["per training run"], scores["per million tokens"]
    assert run["value"] == pytest.approx((m["co2e_hourly_kg"] + m["embodied_co2e_kg"]) * 1000)
    assert per_mtok["R"] == pytest.approx(m["tokens"] / 1e6)
    assert per_mtok["value"] == pytest.approx((m["co2e_hourly_kg"] + m["embodied_co2e_kg"]) * 1000 / (m["tokens"] / 1e6))
    for end, co2e, emb in (("low", "co2e_hourly_kg_low", "embodied_co2e_kg_low"),
                           ("high", "co2e_hourly_kg_high", "embodied_co2e_kg_high")):
        assert per_mtok[end] == pytest.approx((m[co2e] + m[emb]) * 1000 / (m["tokens"] / 1e6))
    assert per_mtok["low"] <= per_mtok["value"] <= per_mtok["high"]


def test_sci_takes_the_hourly_intensity_the_warehouse_has_for_the_jobs_hours(demo):
    """The demo's grid-hourly series covers every hour the job ran: SCI's I is those hours' intensity
    (the mart's hourly-matched CO2e over E, between the series' lowest and highest hour), not the
    zone's annual 322 g/kWh that a signer would otherwise have filed for it."""
    m, score = demo["mart"], read(demo, "sci.json")
    assert m["facility_energy_kwh_hourly"] == pytest.approx(m["facility_energy_kwh"])
    annual = m["co2e_kg"] * 1000 / m["facility_energy_kwh"]
    assert annual == pytest.approx(322.0)
    with duckdb.connect(str(demo["wh"]), read_only=True) as con:
        lo, hi = con.execute("select min(intensity_g_per_kwh), max(intensity_g_per_kwh) from int_grid_hours where zone = "
                             "'aws:us-east-1' and hour_start >= ? and hour_start < ?", [m["start_utc"], m["end_utc"]]).fetchone()
        job_month = con.execute("select sum(co2e_hourly_kg) from job_month where job_id = ?", [JOB]).fetchone()[0]
    assert m["co2e_hourly_kg"] == pytest.approx(job_month, rel=1e-12)      # one figure, from the mart
    assert score["I"]["value"] == pytest.approx(m["co2e_hourly_kg"] * 1000 / m["facility_energy_kwh"])
    assert lo <= score["I"]["value"] <= hi and score["I"]["value"] != pytest.approx(annual, rel=1e-3)
    assert "each hour the job ran" in score["I"]["basis"]
    assert f"I = {score['I']['value']:.2f} g CO2e/kWh" in (demo["out"] / f"{JOB}.ai-act.md").read_text(encoding="utf-8")


def test_sci_states_its_software_boundary(demo):
    """ISO/IEC 21031 asks for the software boundary with the score: the GPUs, the facility through
    its PUE and the host server's embodied share are in; the host's own power, networking and
    storage are out. Without it a signer's SCI could be read as the whole application's."""
    boundary = read(demo, "sci.json")["boundary"]
    included, excluded = " ".join(boundary["included"]), " ".join(boundary["excluded"])
    assert "GPUs" in included and "PUE" in included and "host server" in included
    assert "host power beyond the GPUs" in excluded and "networking" in excluded and "storage" in excluded
    md = (demo["out"] / f"{JOB}.ai-act.md").read_text(encoding="utf-8")
    assert f"Software boundary. In: {'; '.join(boundary['included'])}. Out: {'; '.join(boundary['excluded'])}." in md


def test_a_jobs_embodied_co2e_is_the_audits_for_its_gpu_hours_and_sci_files_it_in_grams(demo):
    """One quantity, one formula: the mart's embodied CO2e of the job's GPU-hours (its forms' and
    SCI's M) is what the audit's reconstruct engine gives for the same GPU-hours: the GPU's
    embodied CO2e plus its share of the host server, amortized, with the same bounds. SCI states M
    in grams (ISO/IEC 21031: M in gCO2e)."""
    from pipelines.reconstruct import embodied_for_hours
    from pipelines.reconstruct.sampling import bounds
    m = demo["mart"]
    assert m["gpu_models"] == "H100-SXM5-80GB" and m["gpu_hours"] > 0
    q, _ = embodied_for_hours({m["gpu_models"]: m["gpu_hours"]})
    assert (m["embodied_co2e_kg"], m["embodied_co2e_kg_low"], m["embodied_co2e_kg_high"]) == \
        pytest.approx((q.value, *bounds(q)), rel=1e-9)
    assert {"embodied:8-gpu-hgx-server:server", "assumptions:accelerators_per_server"} <= set(m["assumption_ids"])
    sci = read(demo, "sci.json")
    assert sci["M"] == {"value": pytest.approx(q.value * 1000, rel=1e-9), "unit": "g CO2e"}
    ai_act = (demo["out"] / f"{JOB}.ai-act.md").read_text(encoding="utf-8")
    assert f"M = {q.value * 1000:.2f} g CO2e" in ai_act


def line(recon, provider: str, account: str, service: str) -> dict:
    rows = recon[(recon.provider == provider) & (recon.account_id == account) & (recon.service == service)]
    assert len(rows) == 1
    return rows.iloc[0].to_dict()


def test_the_aws_export_reconciles_line_by_line(demo):
    recon = demo["recon"]
    payer = line(recon, "aws", "111122223333", "AmazonEC2")
    assert payer["provider_co2e_location_kg"] == pytest.approx(156.3)          # 0.1563 MTCO2e
    assert payer["gap_class"] == "within range" and payer["location_in_range"] and payer["finding"] != payer["finding"]   # NaN: no finding
    assert payer["model_version"] == "v3.0.0"
    assert payer["difference_location_kg"] == pytest.approx(156.3 - payer["co2e_kg"])
    for service in ("AmazonS3", "AmazonEKS", "AWSDataTransfer"):
        assert line(recon, "aws", "111122223333", service)["gap_class"] == "boundary: non-GPU service"
    legacy = line(recon, "aws", "444455556666", "AmazonEC2")
    # the legacy account also runs a CPU-only c5 instance meterbook does not meter: above the range
    assert legacy["provider_co2e_location_kg"] > legacy["co2e_kg_high"] > 0
    assert legacy["gap_class"] == "boundary: shared infrastructure"
    assert "444455556666" in legacy["finding"] and "712.4" in legacy["finding"]
    gcp = line(recon, "gcp", "acme-vision-gcp", "Compute Engine")
    assert (gcp["gap_class"], gcp["model_version"]) == ("boundary: no meterbook data", "12")


def test_an_aws_unit_other_than_mtco2e_is_a_located_reject(tmp_path):
    wh = tmp_path / "wh.duckdb"
    cli("ingest", str(DATA / "aws_carbon_emissions_unit_not_mtco2e.csv"), "--warehouse", str(wh))
    with duckdb.connect(str(wh), read_only=True) as con:
        assert con.execute("select row_number, column_name, check_name from rejects").fetchall() == [
            (2, "total_lbm_emissions_unit", "is_mtco2e")]
        assert con.execute("select count(*) from provider_carbon").fetchone() == (1,)


def test_an_aws_export_without_model_version_stops_with_one_line(tmp_path):
    res = CliRunner().invoke(main, ["ingest", str(DATA / "aws_carbon_emissions_no_model_version.csv"),
                                    "--warehouse", str(tmp_path / "wh.duckdb")])
    assert res.exit_code == 1
    assert "Error:" in res.output and "model_version" in res.output and "Traceback" not in res.output


def test_google_csv_json_lines_and_parquet_read_the_same(tmp_path):
    """BigQuery's nested record as Parquet (project.id, location.region... one level deep) reads
    as its dotted CSV names do."""
    parquet = tmp_path / "gcp_carbon_footprint_2026-10.parquet"
    duckdb.execute(f"copy (select * from read_json('{DATA / 'gcp_carbon_footprint_2026-10.jsonl'}')) to '{parquet}' (format parquet)")
    figures = []
    for path in (DATA / "gcp_carbon_footprint_2026-10.csv", DATA / "gcp_carbon_footprint_2026-10.jsonl", parquet):
        wh = tmp_path / f"{path.name}.duckdb"
        cli("ingest", str(path), "--warehouse", str(wh))
        with duckdb.connect(str(wh), read_only=True) as con:
            figures.append(con.execute("select provider, usage_month, service, region, co2e_location_kg, co2e_market_kg, co2e_scope1_kg, "
                                       "co2e_scope3_kg, model_version from provider_carbon order by row_number").fetchall())
    assert figures[0] == figures[1] == figures[2]
    assert figures[0][0][4:] == (45.51, 7.31, 0.41, 6.9, "12")


def test_a_model_names_its_training_jobs_and_a_period_sums_its_months(demo):
    out = demo["root"] / "by_model"
    cli("report", "disclosure", "--period", "2026-09..2026-10", "--model", "Acme-Embed-1B", "--format", "sci", "--out", str(out),
        "--warehouse", str(demo["wh"]), "--config", demo["config"])
    by_model = json.loads((out / "Acme-Embed-1B.sci.json").read_text(encoding="utf-8"))
    assert by_model == read(demo, "sci.json")


def test_an_unknown_job_is_one_error_line(demo):
    res = CliRunner().invoke(main, ["report", "disclosure", "--month", "2026-10", "--job", "no-such-job", "--format", "sci",
                                    "--out", str(demo["root"] / "none"), "--warehouse", str(demo["wh"]),
                                    "--config", demo["config"]])
    assert res.exit_code == 1 and "Error:" in res.output and "no-such-job" in res.output and "Traceback" not in res.output


def test_the_forms_render_from_marts_alone(demo):
    """Reports read marts only: the same bytes from a warehouse holding nothing but the marts."""
    from pipelines.stages import MARTS
    from reports.disclosure import write_disclosure
    slim = demo["root"] / "slim.duckdb"
    with duckdb.connect(str(slim)) as con:
        con.execute(f"attach '{demo['wh']}' as src (read_only)")
        for (t,) in con.execute("select table_name from duckdb_tables() where database_name = 'src'").fetchall():
            if t in MARTS:
                con.execute(f"create table {t} as select * from src.{t}")
        con.execute("detach src")
        for fmt, suffix in (("ai-act", "ai-act.json"), ("spdx", "spdx.json"), ("cyclonedx", "cdx.json"), ("sci", "sci.json")):
            write_disclosure(con, ("2026-10", "2026-10"), JOB, None, fmt, demo["root"] / "slim")
            assert (demo["root"] / "slim" / f"{JOB}.{suffix}").read_bytes() == (demo["out"] / f"{JOB}.{suffix}").read_bytes()


def test_the_reconciliation_csv_lists_every_line_of_the_export(demo):
    import csv
    out = demo["root"] / "pc"
    cli("report", "provider-carbon", "--month", "2026-10", "--out", str(out), "--warehouse", str(demo["wh"]),
        "--config", demo["config"])
    with open(out / "provider-carbon-2026-10.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    aws = {(r["account_id"], r["service"]) for r in rows if r["provider"] == "aws"}
    assert aws == {("111122223333", "AmazonEC2"), ("111122223333", "AmazonS3"), ("111122223333", "AmazonEKS"),
                   ("111122223333", "AWSDataTransfer"), ("444455556666", "AmazonEC2")}
    assert all(r["gap_class"] for r in rows)


def test_a_restated_export_replaces_the_earlier_one(tmp_path):
    """A later export for the same payer and month replaces the earlier file's lines, never adds to them."""
    wh = tmp_path / "wh.duckdb"
    cli("ingest", str(DATA / "aws_carbon_emissions_demo_2026-10.csv"), "--warehouse", str(wh))
    cli("ingest", str(DATA / "aws_carbon_emissions_unit_not_mtco2e.csv"), "--warehouse", str(wh))
    cli("build", "--warehouse", str(wh))
    with duckdb.connect(str(wh), read_only=True) as con:
        assert con.execute("select account_id, service, provider_co2e_location_kg from provider_carbon_reconciliation").fetchall() \
            == [("111122223333", "AmazonEC2", 156.3)]
