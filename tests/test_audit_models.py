"""The audit's page per model carries the figures the disclosure forms file: for a model trained
here, the same energy, CO2e and SCI scores as `meterbook report disclosure` writes; for a model
known only from its disclosure, its published figures, with their ranges."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipelines.config import load_config
from pipelines.warehouse import connect
from reports.audit import build_audit_context
from tests.pdf_helpers import cli, text

MONTH = "2026-10"
PUBLISHED = Path(__file__).parent / "data" / "disclosures" / "published" / "gpt-3-175b.yaml"


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("audit_models")
    d, wh, out = root / "demo", root / "wh.duckdb", root / "out"
    cli("demo", "--month", MONTH, "--out", str(d))
    cli("ingest", str(d / "billing"), str(d / "dcgm"), str(d / "disclosures"), str(d / "work"), str(d / "grid"),
        str(d / "instruments"), str(PUBLISHED), "--warehouse", str(wh))
    cli("report", "audit", "--month", MONTH, "--warehouse", str(wh), "--config", str(d / "meterbook.toml"), "--out", str(out))
    for fmt in ("ai-act", "sci"):
        cli("report", "disclosure", "--month", MONTH, "--model", "Acme-Embed-1B", "--format", fmt, "--out", str(out),
            "--warehouse", str(wh), "--config", str(d / "meterbook.toml"))
    with connect(wh) as con:
        ctx = build_audit_context(con, load_config(d / "meterbook.toml"), [], MONTH)
    return {"out": out, "pages": {p["name"]: p for p in ctx["model_pages"]}, "text": text(out / "audit.pdf")}


def rows(page: dict) -> dict:
    return {r["item"]: r for r in page["rows"]}


def test_a_page_per_model_trained_here_or_disclosed(audit):
    assert list(audit["pages"]) == ["Acme-Embed-1B", "GPT-3 175B", "finetune-7b"]
    assert [audit["pages"][n]["kind"] for n in audit["pages"]] == ["local", "disclosed", "local"]
    for name in audit["pages"]:
        assert f"Model: {name}" in audit["text"]
    assert "Known only from its disclosure" in audit["text"]


def test_a_model_trained_here_carries_the_forms_energy_co2e_and_sci(audit):
    page = audit["pages"]["Acme-Embed-1B"]
    form = json.loads((audit["out"] / "Acme-Embed-1B.ai-act.json").read_text(encoding="utf-8"))
    sci = json.loads((audit["out"] / "Acme-Embed-1B.sci.json").read_text(encoding="utf-8"))
    energy, r = form["Amount of energy used for training"], rows(page)
    mwh = r["Amount of energy used for training"]
    assert (mwh["value"], mwh["low"], mwh["high"]) == pytest.approx((energy["mwh"], energy["mwh_low"], energy["mwh_high"]))
    assert mwh["low"] < mwh["value"] < mwh["high"]
    assert r["CO2e, location-based"]["value"] == pytest.approx(form["co2e_location_t"])
    assert r["Amount of computation used for training"]["value"] == pytest.approx(form["Amount of computation used for training"]["flop"])
    for mine, filed in zip(page["sci"]["scores"], sci["scores"], strict=True):
        assert mine["functional_unit"] == filed["functional_unit"]
        assert [mine[k] for k in ("R", "value", "low", "high")] == pytest.approx([filed[k] for k in ("R", "value", "low", "high")])
    # the model's disclosure publishes 192 accelerator-hours: 8 GPU-days beside the measured ones
    assert r["Training time, hardware"]["published"] == pytest.approx(8.0)


def test_the_audits_sci_says_which_intensity_and_boundary_as_the_filed_form_does(audit):
    """The SCI's I on the model page is hour by hour where a grid series covers the job, not the
    annual factor the page's CO2e rows use: the page says which, and states the boundary."""
    sci = json.loads((audit["out"] / "Acme-Embed-1B.sci.json").read_text(encoding="utf-8"))
    flat = " ".join(audit["text"].split())
    assert f"I is {sci['I']['basis']}" in flat and "the inventory's, at each zone's annual factor" in flat
    assert "Software boundary: in, " + sci["boundary"]["included"][0] in flat


def test_a_model_known_only_from_its_disclosure_shows_its_published_figures_with_ranges(audit):
    """GPT-3 175B (Patterson et al. 2021, Table 4): 1,287 MWh, 552.1 t CO2e, 14.8 days; no job of it here."""
    page = audit["pages"]["GPT-3 175B"]
    r = rows(page)
    energy, co2e = r["Amount of energy used for training"], r["CO2e, location-based"]
    assert (energy["value"], energy["published"]) == pytest.approx((1287.0, 1287.0))
    assert (co2e["value"], co2e["published"]) == pytest.approx((552.1, 552.1))
    assert r["Training time, wall clock"]["published"] == pytest.approx(14.8)
    for row in r.values():
        if row["low"] is not None and row["value"] is not None:
            assert row["low"] <= row["value"] <= row["high"], row["item"]
    # figures the card does not publish are reconstructed, with a range that is not a point
    flops = r["Amount of computation used for training"]
    assert flops["published"] is None and flops["low"] < flops["value"] < flops["high"]
    assert energy["note"].startswith("reported")
    # SCI per million tokens from the published CO2e and tokens: (E x I + M) / R
    per_mtok = next(s for s in page["sci"]["scores"] if s["functional_unit"] == "per million tokens")
    assert per_mtok["R"] == pytest.approx(3.0e11 / 1e6)
    assert page["sci"]["M"]["unit"] == "g CO2e"       # SCI's M in grams
    assert per_mtok["value"] == pytest.approx((552.1e3 * 1e3 + page["sci"]["M"]["value"]) / 3.0e5)
    assert re.search(r"Model: GPT-3 175B\s+Known only from its disclosure", audit["text"])
