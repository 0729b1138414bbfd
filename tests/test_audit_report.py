"""Footprint-audit PDF read back with pypdf: meters and findings equal `meterbook reconstruct`'s,
figure by figure, every section, fonts, attachments, model filter, team footprints (location-based,
market-based and embodied CO2e side by side, tornado), a warehouse from before number texts,
golden text."""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from pipelines.cli import main
from pipelines.config import load_config
from pipelines.reconstruct import reconstruct
from pipelines.reconstruct_cli import read_disclosures
from pipelines.stages import run_stages
from pipelines.warehouse import connect
from reports.audit import METERS, build_audit_context, meter_rows
from reports.render import sig
from sources.disclosure_format import TEXT_COLUMNS
from tests.pdf_helpers import cli, stable, text

DATA = Path(__file__).parent / "data" / "disclosures" / "published"
PRECISION = Path(__file__).parent / "data" / "disclosures" / "precision"
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
        (expected,) = [reconstruct(d) for d in read_disclosures(DATA / file)]   # the file as the CLI reads it
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


# ---------------------------------------------------------------- the CLI and the audit agree


@pytest.fixture(scope="module")
def both_paths(tmp_path_factory) -> dict:
    """Every demo disclosure and the printed-precision fixture, through `meterbook reconstruct
    --json` (straight from the file) and through the warehouse into the audit."""
    root = tmp_path_factory.mktemp("paths")
    cli("demo", "--out", str(root / "demo"))
    files = sorted((root / "demo" / "disclosures").glob("*.yaml")) + sorted(PRECISION.glob("*.yaml"))
    wh = root / "wh.duckdb"
    cli("ingest", *map(str, files), "--warehouse", str(wh))
    ctx = build_audit_context(connect(wh), load_config(None), [], None)
    from_cli = {r["model"]: r for f in files for r in json.loads(cli("reconstruct", str(f), "--json"))}
    return {"cli": from_cli, "ctx": ctx, "wh": wh}


def test_cli_and_audit_give_the_same_figures_for_every_disclosure(both_paths):
    """Printed precision ('1.1e9' is +-0.05e9, '400.0 W' +-0.05 W, '400 W' +-0.5 W) survives the
    warehouse: the audit's low, central and high, status and findings equal the CLI's."""
    from_cli, ctx = both_paths["cli"], both_paths["ctx"]
    entities = {e["name"]: e for e in ctx["entities"]}
    assert set(entities) == set(from_cli) >= {"Acme-Embed-1B", "Precision-Exponent", "Precision-Trailing-Zeros"}
    rows = {(r["entity"], r["meter"]): r for r in meter_rows(ctx)}   # what audit.csv holds
    for model, result in from_cli.items():
        for name in METERS:
            got = rows[(model, name)]
            m = result["meters"].get(name)
            if m is None:
                assert got["value"] is None, (model, name)
                continue
            assert (got["value"], got["low"], got["high"], got["status"]) == (m["value"], m["low"], m["high"], m["status"]), \
                (model, name)
        assert entities[model]["checks"] == result["checks"], model
        assert entities[model]["flags"] == result["flags"], model


def test_numbers_are_stored_as_written(both_paths):
    con = connect(both_paths["wh"], read_only=True)
    got = con.execute("select model, params, params_text, power_w_text, pue_text from disclosures order by model").fetchall()
    assert got == [("Acme-Embed-1B", 1.1e9, "1.1e9", None, None),
                   ("Precision-Exponent", 1.1e9, "1.1e9", "400", None),
                   ("Precision-Trailing-Zeros", 7.0e9, "7.0e+9", "400.0", "1.10")]
    exponent = next(e for e in both_paths["ctx"]["entities"] if e["name"] == "Precision-Exponent")
    assert exponent["inputs"]["params"] == "1.1e9", "the audit prints published numbers as written"


def test_a_warehouse_from_before_number_texts_gains_them_and_says_what_it_lacks(tmp_path):
    wh = tmp_path / "old.duckdb"
    con = connect(wh)
    for column in TEXT_COLUMNS.values():   # back to the schema before numbers kept their text
        con.execute(f"alter table disclosures drop column {column}")
    con.execute("insert into disclosures (file_id, row_number, model, source, params, tokens, findings) "
                "values (1, 1, 'Old-1B', 'an old load', 1.1e9, 5.0e10, [])")
    con.close()
    con = connect(wh)   # what every command does first
    columns = {r[0] for r in con.execute("describe disclosures").fetchall()}
    assert set(TEXT_COLUMNS.values()) <= columns
    (old,) = build_audit_context(con, load_config(None), [], None)["entities"]
    assert any(f.startswith("params, tokens: ingested before meterbook kept numbers as written") for f in old["findings"])


# ---------------------------------------------------------------- team footprints


def _sections(body: str) -> dict[str, str]:
    """Each team's pages of text, by team."""
    parts = body.split("Methodology: reference data")[0].split("Team: ")[1:]
    return {p.split("\n", 1)[0].strip(): p for p in parts}


def test_every_team_has_its_three_co2e_bases_and_their_tornados(audit, wh):
    rows = list(csv.DictReader(io.StringIO(PdfReader(audit).attachments["audit.csv"][0].decode())))
    sections = _sections(text(audit))
    con = connect(wh["wh"], read_only=True)
    busy = [t for (t,) in con.execute("select team from team_month where month = '2026-10' and gpu_hours > 0").fetchall()]
    assert busy and set(busy) <= set(sections)
    for team in busy:
        meters = {r["meter"]: r for r in rows if r["entity"] == team}
        for name in ("co2e_location_kg", "co2e_market_kg", "co2e_embodied_kg"):
            m = meters[name]
            assert m["status"] == "estimated" and float(m["low"]) <= float(m["value"]) <= float(m["high"]), (team, m)
        assert "embodied:" in meters["co2e_embodied_kg"]["assumptions"]
        page = sections[team]
        assert "What drives CO2e, location-based (kg) (tornado)" in page and "What drives CO2e, embodied (kg) (tornado)" in page, team
        assert "To audit without assumptions, measure" in page


def test_without_a_declared_factor_the_residual_mix_stands_in_with_its_source(wh, tmp_path):
    """Issue 17: market-based factors come from declared instruments or supplier factors, else the
    residual mix from sources/reference with its source and year, else not available (test_carbon)."""
    copy = tmp_path / "wh.duckdb"
    shutil.copy(wh["wh"], copy)
    config = dataclasses.replace(load_config(wh["config"]), market_intensity={}, supplier_factors=())
    con = connect(copy)
    run_stages(con, config)      # the build step, with the config the audit is read under
    ctx = build_audit_context(con, config, ["Llama 2 7B", "GPT-3 175B"], "2026-10")
    teams = [e for e in ctx["entities"] if e["kind"] == "team" and e["meters"][0]["value"]]
    assert teams
    for e in teams:
        market = next(m for m in e["co2e"] if m["meter"] == "co2e_market_kg")
        assert market["status"] == "estimated" and market["low"] <= market["value"] <= market["high"]
        assert "residual mix" in market["method"] and "Green-e" in market["method"] and "2018" in market["method"]
        assert "grid_intensity:cloud_region:aws:us-east-1:2018:residual_mix" in market["assumptions"]
    # A disclosure with no market figure, no factor and no operator that publishes one: not available, and why.
    gpt3 = next(e for e in ctx["entities"] if e["name"] == "GPT-3 175B")
    market = next(m for m in gpt3["co2e"] if m["meter"] == "co2e_market_kg")
    assert market["status"] == "not available" and "neither co2e_market_t nor market_gco2e_per_kwh" in market["method"]


def test_an_operators_published_market_factor_is_shown_with_its_source_and_year(wh, tmp_path):
    # Llama 2 7B gives no market figure, but its operator (meta, from the source) publishes a
    # market-based factor (operators.csv): the audit shows the figure only with that row, its year and source.
    copy = tmp_path / "wh.duckdb"
    shutil.copy(wh["wh"], copy)
    ctx = build_audit_context(connect(copy), load_config(wh["config"]), ["Llama 2 7B"], None)
    (llama,) = [e for e in ctx["entities"] if e["name"] == "Llama 2 7B"]
    market = next(m for m in llama["co2e"] if m["meter"] == "co2e_market_kg")
    assert (market["value"], market["status"]) == (0.0, "estimated")
    assert "operators:meta:2020:market_gco2e_per_kwh" in market["assumptions"]
    assert "from 2020" in market["method"] and "Meta 2024 Sustainability Report" in market["method"]
    # the MFU the published hours imply is not a published MFU
    assert next(m for m in llama["meters"] if m["meter"] == "mfu")["reported"] is None
