"""Published model reports -> disclosures: HF cards and disclosure YAML, with plausibility findings."""
from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import duckdb
import pytest
import yaml

from sources.disclosure_format import DESIGN_FIELDS, EXTENSION_FIELDS, FIELDS, Disclosure, parse_disclosure_yaml, parse_hf_card
from tests.conftest import DATA, SAMPLES, SHARED, ingest_json

CARDS = sorted(p.name for p in (SAMPLES / "model-reports").glob("*.md")) if SAMPLES.is_dir() else []
CARD_FIXTURES = DATA / "disclosures" / "cards"
PUBLISHED = DATA / "disclosures" / "published"
HISTORICAL = "hf-card__Nkluge-correa-Aira__Aira-OPT-1B3__historical-c16fbde.md"

TWO_ACCOUNTINGS = """\
# Llama 2 model card, two of the three sizes; one accounting per document.
model: Llama-2-7B
source: "Meta, Llama 2 model card (MODEL_CARD.md), CO2 emissions table"
params: 7.0e9
tokens: 2.0e12
accelerator: A100-80GB
accelerator_hours: 184320
power_w: 400
power_basis: tdp
location: US
co2e_location_t: 31.22
---
model: Llama-2-13B
source: "Meta, Llama 2 model card (MODEL_CARD.md), CO2 emissions table"
params: 13.0e9
tokens: "2,000,000,000,000"
accelerator: A100-80GB
accelerator_hours: 368640
power_basis: TDP
co2e_location_t: 62.44
"""

WITH_BAD_DOCUMENTS = """\
model: Good-Model
source: "Example report, table 1"
energy_mwh: 10
co2e_location_t: 4
---
model: Typo-Model
source: "Example report, table 2"
co2e_tonnes: 5.0
---
model: No-Source-Model
energy_mwh: 2
---
"""

# co2e typed in kg where the format wants tonnes: 3,200 t from 7.5 MWh.
KG_AS_TONNES = """\
model: Evolved-Transformer-NAS
source: "Patterson et al. 2021 (arXiv:2104.10350), Table 4, co2e mistyped"
accelerator: TPU v2
accelerator_count: 200
energy_mwh: 7.5
energy_scope: facility
co2e_location_t: 3200
"""


def card(name: str) -> Disclosure:
    return parse_hf_card((SAMPLES / "model-reports" / name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- the format itself

def test_disclosure_fields_are_the_design_yaml_fields_plus_named_extensions():
    """design.md's fields in its order, then the three keys the reconstruct engine added."""
    design = SHARED / "design.md"
    if not design.exists():
        pytest.skip("../shared/design.md not present")
    block = re.search(r"## Disclosure format.*?```yaml\n(.*?)```", design.read_text(encoding="utf-8"), re.S).group(1)
    assert tuple(yaml.safe_load(block)) == DESIGN_FIELDS
    assert FIELDS == DESIGN_FIELDS + EXTENSION_FIELDS == ("model", *FIELDS[1:])
    assert [f.name for f in fields(Disclosure)] == [*FIELDS, "row_number", "findings", "number_text"]


# ---------------------------------------------------------------- Hugging Face cards

def test_every_sample_card_is_known(samples):
    assert HISTORICAL in CARDS and len(CARDS) == 7


@pytest.mark.parametrize("name", CARDS)
def test_every_sample_card_converts_and_ingests(samples, warehouse, name):
    d = card(name)
    assert d.model and d.source and d.co2e_location_t > 0 and d.energy_mwh > 0
    assert d.accelerator == "NVIDIA A100-SXM4-40GB" and d.accelerator_count == 1
    (f,) = ingest_json(warehouse, samples / "model-reports" / name)["files"]
    assert (f["kind"], f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == ("hf-model-card", 1, 1, 0)
    assert f["totals"]["findings"] == len(d.findings)
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select model, co2e_location_t, findings from disclosures").fetchall() == [
        (d.model, d.co2e_location_t, d.findings)]


def test_card_grams_become_tonnes_and_kwh_become_mwh(samples):
    d = card("hf-card__Nkluge-correa-Aira__Aira-2-1B1.md")   # emissions: 1710 (g); body 3.51 kWh
    assert d.co2e_location_t == pytest.approx(0.00171) and d.energy_mwh == pytest.approx(0.00351)
    assert (d.location, d.findings) == ("SG", [])


def test_historical_card_raises_kg_typed_into_grams_field(samples):
    old = card(HISTORICAL)                                   # emissions: 1.46, body "1.46 KgCO2"
    assert len(old.findings) == 1 and "kg value typed into the grams field" in old.findings[0]
    fixed = card("hf-card__Nkluge-correa-Aira__Aira-OPT-1B3.md")   # the same card after the fix: 1460
    assert fixed.findings == [] and fixed.co2e_location_t == pytest.approx(1000 * old.co2e_location_t)


def test_opt_350m_location_disagrees_with_body(samples):
    d = card("hf-card__Nkluge-correa-Aira__Aira-OPT-350M.md")
    assert d.location == "US"
    assert d.findings == ["location disagrees: metadata geographical_location 'United States of America' (US) "
                          "but the text says 'Netherlands' (NL)"]


def test_scalar_co2_eq_emissions_is_grams_and_agrees_with_autotrain_body():
    d = parse_hf_card((CARD_FIXTURES / "scalar_co2_eq_emissions_autotrain.md").read_text())
    assert d.co2e_location_t == pytest.approx(25.4476e-6) and d.findings == []


def test_string_emissions_with_unit_keeps_the_first_number():
    d = parse_hf_card((CARD_FIXTURES / "string_with_unit_17g.md").read_text())
    assert (d.model, d.co2e_location_t, d.location, d.accelerator) == (
        "tiny-sentiment", pytest.approx(17e-6), "FR", "Tesla P100-PCIE-16GB")
    assert d.source.endswith("co2_eq_emissions source: Google Colab")


def test_more_information_needed_is_missing_not_a_value():
    d = parse_hf_card((CARD_FIXTURES / "template_more_information_needed.md").read_text())
    # metadata says "[More Information Needed]"; the Environmental Impact section has the figures
    assert (d.model, d.accelerator, d.accelerator_hours, d.co2e_location_t, d.location) == (
        "diffusion-demo", "A100 PCIe 40GB", 150000, pytest.approx(11.25), None)
    empty = parse_hf_card((CARD_FIXTURES / "template_all_missing.md").read_text())
    assert (empty.model, empty.accelerator, empty.accelerator_hours, empty.co2e_location_t) == (
        "placeholder-model", None, None, None)


@pytest.mark.parametrize("name", sorted(p.name for p in CARD_FIXTURES.glob("*.md")))
def test_card_fixtures_ingest(warehouse, name):
    (f,) = ingest_json(warehouse, CARD_FIXTURES / name)["files"]
    assert (f["kind"], f["rows_loaded"], f["rows_rejected"]) == ("hf-model-card", 1, 0)


# ---------------------------------------------------------------- disclosure YAML

def test_yaml_documents_are_accountings():
    a, b = parse_disclosure_yaml(TWO_ACCOUNTINGS)
    assert (a.model, a.row_number, a.params, a.tokens, a.accelerator_hours, a.power_basis, a.co2e_location_t) == (
        "Llama-2-7B", 1, 7.0e9, 2.0e12, 184320, "tdp", 31.22)
    assert (b.model, b.row_number, b.tokens, b.power_basis, b.location, b.findings) == (
        "Llama-2-13B", 2, 2.0e12, "tdp", None, [])
    assert set(a.as_dict()) == {*FIELDS, "row_number", "findings", "number_text"}


def test_yaml_ingests_one_row_per_document(warehouse, tmp_path):
    path = tmp_path / "llama-2.yaml"
    path.write_text(TWO_ACCOUNTINGS, encoding="utf-8")
    (f,) = ingest_json(warehouse, path)["files"]
    assert (f["kind"], f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == ("disclosure", 2, 2, 0)
    assert f["totals"]["co2e_location_t"] == pytest.approx(31.22 + 62.44)


def test_unknown_key_is_a_row_reject_and_strict_parse_raises(warehouse, tmp_path):
    """Our call: in ingest an unknown key (a typo such as co2e_tonnes) rejects that document with a
    located reason and the file's other documents load; the strict parser raises ValueError."""
    path = tmp_path / "mixed.yml"
    path.write_text(WITH_BAD_DOCUMENTS, encoding="utf-8")
    (f,) = ingest_json(warehouse, path)["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (3, 1, 2)
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select row_number, column_name, check_name from rejects order by 1").fetchall() == [
        (2, "co2e_tonnes", "known_key"), (3, "source", "not_nullable")]
    assert "unknown key 'co2e_tonnes'" in con.execute("select message from rejects where row_number = 2").fetchone()[0]
    with pytest.raises(ValueError, match="document 2: unknown key 'co2e_tonnes'"):
        parse_disclosure_yaml(WITH_BAD_DOCUMENTS)


def test_implied_grid_intensity_outside_real_grids_is_a_finding(warehouse, tmp_path):
    (d,) = parse_disclosure_yaml(KG_AS_TONNES)
    assert len(d.findings) == 1 and "implied grid intensity 4.267e+05 gCO2e/kWh" in d.findings[0]
    path = tmp_path / "nas.yaml"
    path.write_text(KG_AS_TONNES, encoding="utf-8")
    (f,) = ingest_json(warehouse, path)["files"]
    assert (f["rows_loaded"], f["totals"]["findings"], f["totals"]["with_findings"]) == (1, 1, 1)
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select len(findings) from disclosures").fetchone()[0] == 1


def test_bad_yaml_syntax_is_an_error(tmp_path):
    from tests.conftest import run_cli
    path = tmp_path / "broken.yaml"
    path.write_text("model: X\nsource: [unclosed\n", encoding="utf-8")
    code, _, err = run_cli("ingest", str(path), "--warehouse", str(tmp_path / "wh.duckdb"))
    assert code == 1 and "Error:" in err and "not valid YAML" in err


def test_demo_disclosure_parses():
    from pipelines.demo import DISCLOSURE
    (d,) = parse_disclosure_yaml(DISCLOSURE)
    assert (d.model, d.accelerator_count, d.location) == ("Acme-Embed-1B", 8, "aws:us-east-1")


def published_yamls() -> list[Path]:
    return sorted([*PUBLISHED.glob("*.yaml"), *PUBLISHED.glob("*.yml")]) if PUBLISHED.is_dir() else []


def test_every_published_footprint_yaml_ingests(warehouse):
    files = published_yamls()
    if not files:
        pytest.skip(f"{PUBLISHED} has no YAML yet (one per row of published-footprints-dev.csv is being written)")
    for f in ingest_json(warehouse, *files)["files"]:
        assert f["kind"] == "disclosure", f["path"]
        assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
        assert f["rows_rejected"] == 0, f"{f['path']}: see the rejects table"


def test_extension_keys_are_checked_against_the_reference_data():
    from sources.disclosure_format import document_problems
    ok = {"model": "M", "source": "S", "facility_type": "Hyperscale", "precision": "fp8", "market_gco2e_per_kwh": 177}
    assert document_problems(ok) == []
    (d,) = parse_disclosure_yaml(yaml.safe_dump(ok))
    assert (d.facility_type, d.precision, d.market_gco2e_per_kwh) == ("hyperscale", "fp8", 177)
    bad = document_problems({**ok, "facility_type": "garage", "precision": "int3", "power_basis": "guess"})
    assert sorted(p.column for p in bad) == ["facility_type", "power_basis", "precision"]


# ---------------------------------------------------------------- card names

AUTOTRAIN = DATA / "disclosures" / "autotrain"


@pytest.mark.parametrize("name, expected", [
    ("inference_url_with_models.md", "acme/autotrain-reviews-1234567"),
    ("inference_url_without_models.md", "acme/autotrain-reviews-7221219"),
    ("from_pretrained_only.md", "acme/autotrain-reviews-1035435"),
    ("model_index_name.md", "acme-reviews-distilbert"),
    ("no_usage_section.md", "no_usage_section"),
    ("acme-reviews-classifier/README.md", "acme-reviews-classifier"),
])
def test_autotrain_cards_are_named_by_what_identifies_them_not_their_title(name, expected):
    """AutoTrain titles every card "Model Trained Using AutoTrain": model-index name, repository
    id, model_name, then the file's stem (a README.md's folder) name the model instead."""
    from pipelines.reconstruct.cli import read_card
    assert read_card(AUTOTRAIN / name)["model"] == expected


def test_autotrain_cards_are_distinct_entities_in_one_warehouse(warehouse, tmp_path):
    cards = sorted(AUTOTRAIN.rglob("*.md"))
    twin = tmp_path / "twin.md"     # another card of the same repository: a second accounting
    twin.write_text((AUTOTRAIN / "inference_url_with_models.md").read_text().replace("25.4476", "30.1"))
    ingest_json(warehouse, *cards, twin)
    con = duckdb.connect(str(warehouse), read_only=True)
    models = [m for (m,) in con.execute("select model from disclosures order by model").fetchall()]
    assert len(models) == len(set(models)) == len(cards) + 1
    assert "Model Trained Using AutoTrain" not in models
    assert "acme/autotrain-reviews-1234567 (twin.md)" in models


def test_a_card_ingested_again_keeps_its_name(warehouse):
    """The same file again is the same entity: its own earlier row does not make its name taken."""
    card = AUTOTRAIN / "no_usage_section.md"
    ingest_json(warehouse, card)
    ingest_json(warehouse, card)
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select model from disclosures").fetchall() == [("no_usage_section",)]
