"""Footprint-audit PDF read back with pypdf: meters equal pipelines.reconstruct, every section,
fonts, attachments, model filter, team footprints, golden text."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from pipelines.cli import main
from pipelines.reconstruct import reconstruct
from reports.render import sig
from tests.pdf_helpers import cli, stable, text

DATA = Path(__file__).parent / "data" / "disclosures" / "published"
MODELS = ["Llama 2 7B", "GPT-3 175B"]


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("audit")
    cli("demo", "--out", str(root / "demo"))
    wh = root / "wh.duckdb"
    d = root / "demo"
    cli("ingest", str(d / "billing"), str(d / "dcgm"), str(d / "disclosures"), str(DATA / "llama-2-7b.yaml"),
        str(DATA / "gpt-3-175b.yaml"), "--warehouse", str(wh))
    return {"root": root, "wh": wh, "config": d / "meterbook.toml"}


@pytest.fixture(scope="module")
def audit(wh) -> Path:
    out = wh["root"] / "out"
    args = ["report", "audit", "--month", "2026-10", "--warehouse", str(wh["wh"]), "--config", str(wh["config"]), "--out", str(out)]
    for m in MODELS:
        args += ["--model", m]
    output = cli(*args)
    assert f"wrote {out / 'audit.pdf'}" in output
    return out / "audit.pdf"


def disclosure(path: Path) -> dict:
    import yaml
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_meters_equal_reconstruct(audit):
    rows = list(csv.DictReader(io.StringIO(PdfReader(audit).attachments["audit.csv"][0].decode())))
    for name, file in (("Llama 2 7B", "llama-2-7b.yaml"), ("GPT-3 175B", "gpt-3-175b.yaml")):
        expected = reconstruct(disclosure(DATA / file))
        got = {r["meter"]: r for r in rows if r["entity"] == name}
        for meter, m in expected["meters"].items():
            if meter in got:
                assert float(got[meter]["value"]) == pytest.approx(m["value"], rel=1e-9)
                assert float(got[meter]["low"]) == pytest.approx(m["low"], rel=1e-9)
                assert got[meter]["status"] == m["status"]


def test_every_section_and_entity(audit, wh):
    body = text(audit)
    for s in ("Entities", "Meters: reported vs reconstructed", "CO2e: location-based, market-based and embodied",
              "(tornado)", "Consistency of reported figures",
              "To audit without assumptions, publish", "Methodology", "Lineage"):
        assert s in body, s
    for m in MODELS:
        assert f"Disclosure: {m}" in body
    assert "Acme-Embed-1B" not in body.split("Methodology")[0], "--model filters the disclosures"
    assert "Team: research" in body, "--month adds the month's team footprints"
    for status in ("reported", "derived", "estimated"):
        assert status in body


def test_reported_figure_and_check_are_printed(audit):
    body = text(audit)
    llama = reconstruct(disclosure(DATA / "llama-2-7b.yaml"))
    check = next(c for c in llama["checks"] if c["meter"] == "co2e_location_kg")
    assert sig(check["reported"]) in body and check["status"] in body


def test_fonts_embedded_and_attachments(audit):
    reader = PdfReader(audit)
    assert set(reader.attachments) >= {"audit.csv", "assumptions.json", "provenance.json"}
    used = json.loads(reader.attachments["assumptions.json"][0])
    assert {u["entity"] for u in used} >= set(MODELS)
    for page in reader.pages:
        for font in page["/Resources"].get("/Font", {}).values():
            font = font.get_object()
            desc = (font["/DescendantFonts"][0].get_object() if "/DescendantFonts" in font else font)["/FontDescriptor"]
            assert any(k in desc for k in ("/FontFile", "/FontFile2", "/FontFile3"))


def test_unknown_model_is_one_error_line(wh):
    res = CliRunner().invoke(main, ["report", "audit", "--model", "No Such Model", "--warehouse", str(wh["wh"]),
                                    "--out", str(wh["root"] / "x")])
    assert res.exit_code == 1 and res.output.startswith("Error:") and "Llama 2 7B" in res.output


def test_golden_disclosure_page(audit, golden):
    reader = PdfReader(audit)
    page = next(p.extract_text() for p in reader.pages if "Disclosure: Llama 2 7B" in p.extract_text())
    golden("audit_llama-2-7b.txt", stable(page) + "\n")
