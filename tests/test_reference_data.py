"""Invariants of the reference data in sources/reference/ and of its loader."""

from __future__ import annotations

import csv
import re
import shutil
from datetime import date

import duckdb
import pytest

from sources import reference_data as rd

REQUIRED_GPUS = (
    "V100-SXM2-32GB", "V100-PCIE-16GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-40GB",
    "A100-PCIE-80GB", "A10G", "A10", "L4", "L40S", "T4", "H100-SXM5-80GB", "H100-PCIE-80GB",
    "H100-NVL-94GB", "H800-SXM5-80GB", "H20", "H200-SXM-141GB", "GH200", "B200", "B300",
    "MI250X", "MI300X", "TPU-v2", "TPU-v3", "TPU-v4", "TPU-v5e", "TPU-v5p", "TPU-v6e",
    "Gaudi2", "Gaudi3",
)
# Parts whose hardware has no BF16 datapath; the spec table omits the metric for them.
NO_BF16 = {"V100-SXM2-32GB", "V100-SXM2-16GB", "V100-PCIE-16GB", "V100-PCIE-32GB", "T4",
           "P100-PCIE-16GB", "P100-SXM2-16GB", "P4"}
NVIDIA_AMD_DATACENTER = [g for g in REQUIRED_GPUS if not g.startswith(("TPU", "Gaudi"))]

US_STATES = (
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ "
    "NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC"
).split()

REQUIRED_ASSUMPTIONS = (
    "gpu_utilization_unknown", "gpu_power_fraction_of_tdp", "pue_unknown",
    "hardware_lifetime_years", "grid_intensity_world_fallback", "mfu_typical",
    "server_overhead_fraction", "idle_power_fraction_of_tdp",
)


def rows(name: str) -> list[dict[str, str]]:
    with open(rd.REFERENCE_DIR / f"{name}.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def header(name: str) -> list[str]:
    with open(rd.REFERENCE_DIR / f"{name}.csv", newline="", encoding="utf-8") as f:
        return next(csv.reader(f))


@pytest.fixture(scope="module")
def specs() -> dict[tuple[str, str], dict[str, str]]:
    return {(r["gpu_model"], r["metric"]): r for r in rows("gpu_specs")}


@pytest.fixture(scope="module")
def loaded() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    rd.load_reference(con)
    return con


# ------------------------------------------------------------------ coefficient files


@pytest.mark.parametrize("name", rd.COEFFICIENT_FILES)
def test_coefficient_file_has_keys_then_common_columns(name):
    assert tuple(header(name)) == rd.KEYS[name] + rd.COMMON_COLUMNS


@pytest.mark.parametrize("name", rd.COEFFICIENT_FILES)
def test_every_row_has_unit_source_numbers_and_ordered_range(name):
    bad = []
    for i, r in enumerate(rows(name), start=2):  # line 1 is the header
        try:
            value, low, high = (float(r[c]) for c in ("value", "low", "high"))
        except ValueError:
            bad.append(f"line {i}: non-numeric value/low/high")
            continue
        if not r["unit"].strip() or not r["source"].strip():
            bad.append(f"line {i}: empty unit or source")
        if not low <= value <= high:
            bad.append(f"line {i}: not low <= value <= high ({low}, {value}, {high})")
        date.fromisoformat(r["retrieved"])
    assert not bad, f"{name}.csv: " + "; ".join(bad[:10])


@pytest.mark.parametrize("name", rd.COEFFICIENT_FILES + ("instance_types",))
def test_keys_are_unique(name):
    key = rd.KEYS.get(name, ("cloud", "instance_type"))
    seen = [tuple(r[k] for k in key) for r in rows(name)]
    dupes = {k for k in seen if seen.count(k) > 1}
    assert not dupes


# ------------------------------------------------------------------ GPU catalog


def test_required_gpus_have_tdp_and_bf16(specs):
    missing = [g for g in REQUIRED_GPUS if (g, "tdp_w") not in specs]
    missing += [f"{g}:bf16" for g in NVIDIA_AMD_DATACENTER
                if g not in NO_BF16 and (g, "peak_flops_bf16") not in specs]
    assert not missing


def test_gpu_spec_metrics_and_units(specs):
    units = {"tdp_w": "W", "idle_w": "W", "memory_gb": "GB"}
    for (g, metric), r in specs.items():
        assert metric in {"tdp_w", "idle_w", "memory_gb"} or re.fullmatch(
            r"peak_flops_(fp32|tf32|bf16|fp16|fp8)", metric), (g, metric)
        assert r["unit"] == units.get(metric, "FLOP/s"), (g, metric)


def test_flops_are_dense_not_sparse(specs):
    # NVIDIA's headline H100 SXM BF16 figure with sparsity is 1979 TFLOP/s; dense is half.
    assert float(specs[("H100-SXM5-80GB", "peak_flops_bf16")]["value"]) < 1.0e15
    assert float(specs[("A100-SXM4-80GB", "peak_flops_bf16")]["value"]) == pytest.approx(312e12)
    for g in {g for g, _ in specs}:
        if (g, "peak_flops_fp8") in specs and (g, "peak_flops_bf16") in specs:
            assert float(specs[(g, "peak_flops_fp8")]["value"]) >= float(specs[(g, "peak_flops_bf16")]["value"])


def test_instance_types_reference_known_gpus(specs):
    models = {g for g, _ in specs}
    for r in rows("instance_types"):
        assert r["cloud"] in {"aws", "gcp", "azure"}, r["instance_type"]
        assert r["gpu_model"] in models, r["instance_type"]
        assert float(r["gpu_count"]) > 0, r["instance_type"]
        assert r["source"].strip() and r["retrieved"].strip(), r["instance_type"]


@pytest.mark.parametrize("instance_type, gpu_model, count", [
    ("p4d.24xlarge", "A100-SXM4-40GB", 8), ("p4de.24xlarge", "A100-SXM4-80GB", 8),
    ("p5.48xlarge", "H100-SXM5-80GB", 8), ("g4dn.12xlarge", "T4", 4), ("g4dn.metal", "T4", 8),
    ("ml.p4d.24xlarge", "A100-SXM4-40GB", 8), ("a2-megagpu-16g", "A100-SXM4-40GB", 16),
    ("Standard_ND96isr_H100_v5", "H100-SXM5-80GB", 8), ("gpu:nvidia-l4", "L4", 1),
])
def test_instance_type_examples(instance_type, gpu_model, count):
    match = [r for r in rows("instance_types") if r["instance_type"] == instance_type]
    assert len(match) == 1
    assert (match[0]["gpu_model"], float(match[0]["gpu_count"])) == (gpu_model, count)


def test_alias_targets_exist_and_normalised_aliases_are_unique(specs):
    models = {g for g, _ in specs}
    norm = [rd._norm_gpu(r["alias"]) for r in rows("gpu_aliases")]
    assert len(norm) == len(set(norm))
    assert all(r["gpu_model"] in models for r in rows("gpu_aliases"))


@pytest.mark.parametrize("name, expected", [
    ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"), ("Tesla T4", "T4"), ("A10G", "A10G"),
    ("A100-80GB", "A100-SXM4-80GB"), ("nvidia a10g", "A10G"), ("  NVIDIA H100 80GB HBM3 ", "H100-SXM5-80GB"),
    ("8 x NVIDIA H20", "H20"), ("TPUv4", "TPU-v4"), ("TPU v4", "TPU-v4"), ("H100-SXM5-80GB", "H100-SXM5-80GB"),
    ("NVIDIA-H100-80GB-HBM3", "H100-SXM5-80GB"), ("not a gpu", None), ("", None),
])
def test_resolve_gpu(name, expected):
    assert rd.resolve_gpu(name) == expected


# ------------------------------------------------------------------ grid, PUE, embodied


def test_grid_coverage():
    grid = rows("grid_intensity")
    states = {r["zone_id"] for r in grid if r["zone_kind"] == "us_state"}
    assert {f"US-{s}" for s in US_STATES} <= states
    countries = {r["zone_id"] for r in grid if r["zone_kind"] == "country"}
    assert len(countries) >= 150
    assert all(re.fullmatch(r"[A-Z]{2}", c) for c in countries)
    assert [r["zone_id"] for r in grid if r["zone_kind"] == "world"] == ["WORLD"]
    for zone in ("aws:us-east-1", "aws:us-west-2", "aws:eu-west-1", "gcp:us-central1", "azure:eastus"):
        assert any(r["zone_id"] == zone for r in grid), zone
    assert {r["zone_kind"] for r in grid} <= {"world", "country", "us_state", "cloud_region"}
    assert {r["basis"] for r in grid} <= {"location", "residual_mix"}
    assert {r["unit"] for r in grid} == {"gCO2e/kWh"}


def test_cloud_region_ids_name_a_provider():
    for r in rows("grid_intensity"):
        if r["zone_kind"] == "cloud_region":
            assert re.fullmatch(r"(aws|gcp|azure):[a-z0-9-]+", r["zone_id"]), r["zone_id"]


def test_pue_rows():
    pue = rows("pue")
    assert {r["provider"] for r in pue} <= {"aws", "gcp", "azure", "oracle", "onprem", ""}
    for provider in ("aws", "gcp", "azure"):
        assert any(r["provider"] == provider and r["region"] == "" for r in pue), provider
    # the unknown-facility default lives in assumptions.csv (pue_unknown) only: a second row here
    # is how a cloud zone and an owned cluster came to price the same unknown facility differently
    assert not any(r["provider"] == "" and r["facility_type"] == "unknown" for r in pue)
    assert all(1.0 <= float(r["low"]) and float(r["high"]) < 3 for r in pue)


def test_embodied_items(specs):
    models = {g for g, _ in specs}
    for r in rows("embodied"):
        assert r["kind"] in {"gpu", "server"}
        assert r["unit"] == "kgCO2e"
        if r["kind"] == "gpu":
            assert r["item"] in models, r["item"]


def test_required_assumptions_exist():
    ids = {r["assumption_id"] for r in rows("assumptions")}
    assert set(REQUIRED_ASSUMPTIONS) <= ids
    assert all(re.fullmatch(r"[a-z0-9_]+", i) for i in ids)


# ------------------------------------------------------------------ loader and lookups


def test_load_reference_creates_tables_with_unique_coefficient_ids(loaded):
    all_ids: list[str] = []
    for name in rd.COEFFICIENT_FILES:
        n_csv = len(rows(name))
        ids = [i for (i,) in loaded.execute(f"SELECT coefficient_id FROM ref_{name}").fetchall()]
        assert len(ids) == n_csv and len(set(ids)) == n_csv, name
        assert all(i.startswith(f"{name}:") for i in ids)
        all_ids += ids
    assert len(all_ids) == len(set(all_ids))
    for name in rd.CATALOG_FILES:
        assert loaded.execute(f"SELECT count(*) FROM ref_{name}").fetchone()[0] == len(rows(name))


def test_load_reference_types_and_ids(loaded):
    value, cid = loaded.execute(
        "SELECT value, coefficient_id FROM ref_gpu_specs "
        "WHERE gpu_model = 'A100-SXM4-80GB' AND metric = 'tdp_w'").fetchone()
    assert (value, cid) == (400.0, "gpu_specs:A100-SXM4-80GB:tdp_w")
    assert loaded.execute(
        "SELECT count(*) FROM ref_grid_intensity WHERE coefficient_id = 'grid_intensity:country:FR:2023:location'"
    ).fetchone()[0] == 1
    # Empty key cells load as '' (not NULL) so ids and joins stay well-defined.
    assert loaded.execute("SELECT count(*) FROM ref_pue WHERE region IS NULL").fetchone()[0] == 0
    assert loaded.execute("SELECT count(*) FROM ref_pue WHERE region = ''").fetchone()[0] > 0
    types = dict(loaded.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'ref_instance_types'"
    ).fetchall())
    assert types["gpu_count"] == "DOUBLE" and types["instance_type"] == "VARCHAR"
    # Loading twice replaces rather than appends.
    rd.load_reference(loaded)
    assert loaded.execute("SELECT count(*) FROM ref_embodied").fetchone()[0] == len(rows("embodied"))


def test_a_reference_file_edited_since_the_last_load_is_loaded_again(tmp_path, monkeypatch):
    """Tables made from the same file bytes are kept (every ingest and build loads the reference);
    one whose file changed is made again, whatever else is kept."""
    ref = tmp_path / "reference"
    shutil.copytree(rd.REFERENCE_DIR, ref)
    monkeypatch.setattr(rd, "REFERENCE_DIR", ref)
    con = duckdb.connect()
    rd.load_reference(con)
    tdp = "SELECT value FROM ref_gpu_specs WHERE gpu_model = 'A100-SXM4-80GB' AND metric = 'tdp_w'"
    # a table left as it was is not read again: a row changed by hand stays
    con.execute("UPDATE ref_embodied SET notes = 'kept'")
    specs = ref / "gpu_specs.csv"
    specs.write_text(specs.read_text(encoding="utf-8").replace("A100-SXM4-80GB,tdp_w,400,", "A100-SXM4-80GB,tdp_w,401,"),
                     encoding="utf-8")
    rd.load_reference(con)
    assert con.execute(tdp).fetchone() == (401.0,)
    assert {r for (r,) in con.execute("SELECT DISTINCT notes FROM ref_embodied").fetchall()} == {"kept"}


def test_assumption_lookup():
    a = rd.assumption("pue_unknown")
    assert a["low"] <= a["value"] <= a["high"] and a["unit"] == "ratio" and a["source"]
    assert a["coefficient_id"] == "assumptions:pue_unknown"
    with pytest.raises(KeyError):
        rd.assumption("no_such_assumption")


@pytest.mark.parametrize("zone, kind, zone_id", [
    ("FR", "country", "FR"), ("fr", "country", "FR"), ("US-CA", "us_state", "US-CA"),
    ("aws:us-east-1", "cloud_region", "aws:us-east-1"), ("us-east-1", "cloud_region", "aws:us-east-1"),
    ("us-central1", "cloud_region", "gcp:us-central1"), ("eastus", "cloud_region", "azure:eastus"),
    ("azure:East US", "cloud_region", "azure:eastus"), ("world", "world", "WORLD"),
])
def test_grid_intensity_resolves(zone, kind, zone_id):
    g = rd.grid_intensity(zone)
    assert (g["zone_kind"], g["zone_id"], g["fallback"], g["level"]) == (kind, zone_id, False, "zone")
    assert g["low"] <= g["value"] <= g["high"] and g["unit"] == "gCO2e/kWh"
    assert g["basis"] == "location"


def test_grid_intensity_falls_back_to_world_flagged():
    g = rd.grid_intensity("XX")
    assert g["fallback"] is True and g["zone_kind"] == "world"
    assert g["coefficient_id"].startswith("grid_intensity:world:WORLD:")


@pytest.mark.parametrize("zone, country", [("US-PR", "US"), ("DK-DK1", "DK"), ("SE-SE3", "SE")])
def test_a_zone_without_a_row_takes_its_countrys_not_the_worlds(zone, country):
    """A published location with no grid row of its own (Puerto Rico, a Danish bidding zone) took
    the world's 480 g/kWh: the audit reconstructed a US disclosure at a global average and named
    the world's row. It takes its country's, as the build's zones do (int_zone_factors)."""
    g = rd.grid_intensity(zone)
    assert (g["level"], g["zone_kind"], g["zone_id"], g["fallback"]) == ("country", "country", country, False)
    assert g["coefficient_id"].startswith(f"grid_intensity:country:{country}:")


def test_a_cloud_region_without_a_row_takes_its_grid_zones_then_its_countrys(monkeypatch):
    """grid_zones.csv places a region on its grid: with no row of its own, the grid zone's row, else
    the country's, as int_zone_factors orders them."""
    monkeypatch.setattr(rd, "_grid_areas", lambda: {"aws:xx-new-1": ("DE", "DE"), "aws:xx-new-2": ("DK-DK1", "DK")})
    assert (rd.grid_intensity("aws:xx-new-1")["level"], rd.grid_intensity("aws:xx-new-1")["zone_id"]) == ("grid zone", "DE")
    assert (rd.grid_intensity("aws:xx-new-2")["level"], rd.grid_intensity("aws:xx-new-2")["zone_id"]) == ("country", "DK")
    assert rd.grid_intensity("aws:xx-new-3")["level"] == "world"


def test_readme_lists_every_assumption_id():
    """The README's list is where a reader looks up what an assumption id is for."""
    readme = (rd.REFERENCE_DIR / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`([a-z0-9_]+)`", readme[readme.index("## assumptions.csv"):]))
    missing = [r["assumption_id"] for r in rows("assumptions") if r["assumption_id"] not in listed]
    assert not missing, f"add to sources/reference/README.md (assumptions.csv): {missing}"
