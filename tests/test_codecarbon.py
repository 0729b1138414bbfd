"""CodeCarbon emissions.csv: every real layout loads, totals match the raw file, defects are
located rejects, and the naive local end timestamp becomes UTC in the right zone."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from core.errors import InputError
from pipelines.ingest import ingest
from pipelines.warehouse import connect
from schemas.runs import Runs
from tests.conftest import DATA, SAMPLES, ingest_json

CC_SAMPLES = sorted(p.name for p in (SAMPLES / "codecarbon").glob("*")) if SAMPLES.is_dir() else []
FIXTURES = DATA / "codecarbon"
AIRA = "third-party__ArkNightmaster-AIRA__LLaMA-Factory-emissions.csv"

# Known defects of the real files, each a located reject (0 = a clean file).
EXPECTED_REJECTS = {
    "codecarbon-repo__examples-emissions__2020-08-12_1af0333b.csv": 100,   # Excel mm:ss.0 timestamps
    "codecarbon-repo__examples-emissions__2020-11-09_27655e1a.csv": 2,     # 2020-04-31, 2020-06-31
    "codecarbon-repo__examples-emissions__2020-12-01_023f9b45.csv": 2,
    "codecarbon-repo__examples-emissions__2021-07-08_3fa53381.csv": 2,
    "codecarbon-repo__examples-emissions__2021-07-14_833ca82a.csv": 3,     # + two rows glued on one line
    "codecarbon-repo__examples-emissions__2021-09-16_3201bbdf.csv": 2,
    "codecarbon-repo__examples-emissions__2023-08-02_ef967f52.csv": 2,
    "codecarbon-repo__examples-emissions__2024-06-08_a4c8d302.csv": 2,     # blank emissions/energy
    "codecarbon-repo__tests__emissions_invalid_headers.csv": 0,
    "codecarbon-repo__tests__emissions_valid_headers.csv": 0,
    "third-party__Akialess-nnLandmark__emissions.csv": 0,
    "third-party__Ambroise012-Unstructured-pruning-Llama__emissions.csv": 0,
    AIRA: 0,
}


def rejected_rows(warehouse: Path, path: Path) -> list[int]:
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = [r[0] for r in con.execute("""select distinct r.row_number from rejects r join source_files f using (file_id)
                                         where f.path = ? order by 1""", [str(path.resolve())]).fetchall()]
    con.close()
    return rows


def raw_sums(path: Path, skip_rows: list[int]) -> tuple[int, float, float]:
    """Runs, energy and emissions summed straight from the file, without the reader: DuckDB's own
    CSV reader, all text, the rejected rows left out."""
    con = duckdb.connect()
    con.execute("create table skip (n bigint)")
    if skip_rows:
        con.executemany("insert into skip values (?)", [(n,) for n in skip_rows])
    return con.execute("""
        with raw as (select row_number() over () as n, * from read_csv(?, all_varchar = true, header = true,
                                                                       null_padding = true, strict_mode = false))
        select count(*), coalesce(sum(try_cast(trim(energy_consumed) as double)), 0),
               coalesce(sum(try_cast(trim(emissions) as double)), 0)
        from raw where n not in (select n from skip)""", [str(path)]).fetchone()


def test_every_sample_is_known(samples):
    assert sorted(EXPECTED_REJECTS) == CC_SAMPLES


@pytest.mark.parametrize("name", CC_SAMPLES)
def test_sample_loads_and_totals_match_raw_file(samples, warehouse, name):
    path = samples / "codecarbon" / name
    (f,) = ingest_json(warehouse, path)["files"]
    assert f["kind"] == "codecarbon" and f["status"] == "loaded"
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
    assert f["rows_rejected"] == EXPECTED_REJECTS[name]
    skip = rejected_rows(warehouse, path)
    n, kwh, kg = raw_sums(path, skip)
    assert f["totals"]["runs"] == f["rows_loaded"] == n
    assert f["totals"]["energy_kwh"] == pytest.approx(kwh, rel=1e-12, abs=1e-15)
    assert f["totals"]["emissions_kg"] == pytest.approx(kg, rel=1e-12, abs=1e-15)


def test_loaded_runs_satisfy_the_pandera_contract(samples, warehouse):
    ingest_json(warehouse, *[samples / "codecarbon" / n for n in CC_SAMPLES], FIXTURES)
    con = duckdb.connect(str(warehouse), read_only=True)
    for (file_id,) in con.execute("select distinct file_id from runs").fetchall():
        df = con.sql("select * from runs where file_id = ?", params=[file_id]).to_arrow_table().to_pandas()
        Runs.validate(df, lazy=True)


def test_excel_mangled_timestamps_are_rejects_with_a_reason(samples, warehouse):
    path = samples / "codecarbon" / "codecarbon-repo__examples-emissions__2020-08-12_1af0333b.csv"
    (f,) = ingest_json(warehouse, path)["files"]
    assert (f["rows_read"], f["rows_loaded"]) == (100, 0)
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute("select distinct value, message from rejects where check_name = 'parses_as_timestamp'").fetchall()
    assert rows == [("26:11.7", rows[0][1])] and "Excel" in rows[0][1]


def test_aira_gpu_count_disagrees_with_gpu_model(samples, warehouse):
    (f,) = ingest_json(warehouse, samples / "codecarbon" / AIRA)["files"]
    assert "2.8.3" in f["format_version"] and "3.0.7" in f["format_version"]   # two versions, one file
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute("""select gpu_model_raw, gpu_model, gpu_count, gpu_count_in_model, gpu_count_mismatch, count(*)
                          from runs group by all order by all""").fetchall()
    assert {r[:2] for r in rows} == {("8 x NVIDIA H20", "H20"), ("8 x NVIDIA H800", "H800-SXM5-80GB")}
    assert all(r[3] == 8 and r[2] in (1, 2) and r[4] for r in rows)
    assert sum(r[5] for r in rows) == 37


def test_aira_hong_kong_local_time_to_utc(samples, warehouse):
    ingest_json(warehouse, samples / "codecarbon" / AIRA)
    con = duckdb.connect(str(warehouse), read_only=True)
    # Row 1: timestamp 2025-05-30T00:50:12 (HKT, UTC+8), duration 14.526 s.
    end, start, tz, basis = con.execute(
        "select end_utc, start_utc, timezone, timezone_basis from runs where run_id = '68d4ea3d-c68b-4d9e-9ba4-102614600822'"
    ).fetchone()
    assert (end, tz, basis) == (datetime(2025, 5, 29, 16, 50, 12), "Asia/Hong_Kong", "country")
    assert (end - start).total_seconds() == pytest.approx(14.52606578124687, abs=1e-6)


def test_timezone_from_country_and_flagged_fallbacks(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "timezone_local_end_time.csv")["files"]
    # row 4's region (virginia) names its zone: no fallback to note for it
    assert any("read as UTC" in n for n in f["notes"]) and not any("America/New_York" in n for n in f["notes"])
    con = duckdb.connect(str(warehouse), read_only=True)
    got = con.execute("select row_number, end_utc, start_utc, timezone, timezone_basis from runs order by 1").fetchall()
    assert got == [
        (1, datetime(2024, 7, 1, 10), datetime(2024, 7, 1, 9), "Europe/Paris", "country"),          # CEST, UTC+2
        (2, datetime(2024, 1, 15, 11), datetime(2024, 1, 15, 10, 30), "Europe/Paris", "country"),   # CET, UTC+1
        (3, datetime(2024, 7, 1, 12), datetime(2024, 7, 1, 11, 59), "UTC", "assumed_utc"),          # no country
        (4, datetime(2024, 7, 1, 16), datetime(2024, 7, 1, 15, 59), "America/New_York", "region"),
        # an explicit offset wins over the country (DuckDB's TIMESTAMP cast would silently drop it)
        (5, datetime(2024, 7, 1, 10), datetime(2024, 7, 1, 9, 59), None, "offset_in_timestamp"),
    ]


def test_timezone_option_overrides_the_country(warehouse):
    con = connect(warehouse)
    (res,) = ingest(con, [FIXTURES / "timezone_local_end_time.csv"], options={"timezone": "Asia/Tokyo"})
    assert res.rows_loaded == 5
    got = con.execute("select distinct end_utc, timezone, timezone_basis from runs where row_number in (1, 3, 4)").fetchall()
    assert got == [(datetime(2024, 7, 1, 3), "Asia/Tokyo", "option")]   # 12:00 JST = 03:00 UTC


def test_unknown_timezone_option_is_an_error(warehouse):
    con = connect(warehouse)
    with pytest.raises(InputError, match="unknown time zone 'Mars/Olympus'"):
        ingest(con, [FIXTURES / "timezone_local_end_time.csv"], options={"timezone": "Mars/Olympus"})
    assert con.execute("select count(*) from source_files").fetchone()[0] == 0


def test_bak_file_with_padded_headers_and_values(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "padded_headers.csv.bak")["files"]
    assert (f["kind"], f["rows_loaded"], f["rows_rejected"]) == ("codecarbon", 2, 0)
    assert f["totals"]["energy_kwh"] == pytest.approx(0.008063 + 0.016138)
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select distinct project, country_iso, region, codecarbon_version, pue from runs").fetchall() == [
        ("green-bench", "DEU", "hesse", "2.3.4", 1.0)]


def test_reordered_columns_are_read_by_name(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "reordered_columns_cloud_last.csv")["files"]
    assert (f["rows_loaded"], f["rows_rejected"]) == (2, 0)
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute("""select cloud_provider, cloud_region, gpu_model, gpu_count, gpu_count_mismatch, energy_kwh,
                                 gpu_energy_kwh, timezone from runs order by row_number""").fetchall()
    assert rows == [("aws", "eu-west-1", "A10G", 1.0, False, 0.325, 0.25, "Europe/Dublin"),
                    ("aws", "eu-west-1", "A10G", 2.0, True, 0.1625, 0.125, "Europe/Dublin")]


def test_mixed_versions_in_one_concatenated_file(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "mixed_versions_concatenated.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (5, 4, 1)
    assert "2.8.3" in f["format_version"] and "3.0.7" in f["format_version"]
    assert any("2 header lines" in n for n in f["notes"])
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute("select row_number, project, experiment, codecarbon_version, gpu_model from runs order by 1").fetchall()
    assert rows == [
        (1, "legacy", "f5d08fb3-71df-4176-ba9b-7b76f13e8635", None, None),    # v1 layout, its own header
        (2, "legacy", "c7f34e4e-2452-44cc-ba0a-d7dc264c208d", None, None),
        (4, "codecarbon", "5b0fa12a-3dd7-45bb-9766-cc326314d9f1", "2.8.3", "H20"),   # row 3 is the second header
        (5, "codecarbon", "5b0fa12a-3dd7-45bb-9766-cc326314d9f1", "3.0.7", "H800-SXM5-80GB"),
    ]
    assert con.execute("select row_number, check_name, message from rejects").fetchall() == [
        (6, "field_count", "row has 22 fields, its header has 32")]
    assert f["totals"]["energy_kwh"] == pytest.approx(0.0035 + 0.0070 + 0.00211 + 0.1868)


def test_missing_energy_column_is_a_structural_error(warehouse, tmp_path):
    bad = tmp_path / "emissions.csv"
    bad.write_text("timestamp,project_name,duration,emissions\n2024-01-01T00:00:00,p,1,0.1\n", encoding="utf-8")
    con = connect(warehouse)
    with pytest.raises(InputError, match="missing required column energy_consumed"):
        ingest(con, [bad])


def test_demo_codecarbon_file_loads_clean(warehouse, tmp_path):
    from pipelines import demo
    m0 = datetime(2026, 10, 1)
    path = demo.write_csv(tmp_path / "emissions.csv", demo.CODECARBON_COLUMNS, demo.codecarbon_rows(demo.fleet(), m0))
    (f,) = ingest_json(warehouse, path)["files"]
    assert f["kind"] == "codecarbon" and f["rows_rejected"] == 0 and f["rows_loaded"] > 0
    n, kwh, kg = raw_sums(path, [])
    assert (f["totals"]["runs"], f["totals"]["energy_kwh"], f["totals"]["emissions_kg"]) == (n, pytest.approx(kwh),
                                                                                           pytest.approx(kg))


def test_readers_register_when_the_sources_package_is_imported():
    """A fresh process (in-process imports of sources.codecarbon would hide a missing line in
    sources/__init__.py, which is what the CLI relies on)."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", "import sources; print(' '.join(sorted(sources.REGISTRY)))"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert {"codecarbon", "disclosure", "hf-model-card"} <= set(out)


def test_us_region_names_its_zone_and_mixed_gpu_models_are_summed(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "us_region_names_its_zone_mixed_gpu_models.csv")["files"]
    assert (f["rows_loaded"], f["rows_rejected"]) == (3, 0)
    assert f["totals"]["energy_kwh"] == pytest.approx(0.1862 + 0.3725 + 0.0621)
    con = duckdb.connect(str(warehouse), read_only=True)
    got = con.execute("select row_number, end_utc, timezone, timezone_basis, gpu_count_in_model, gpu_count_mismatch "
                      "from runs order by 1").fetchall()
    assert got == [
        # Washington: Pacific (PDT in July, PST in January), not New York's Eastern time
        (1, datetime(2026, 7, 14, 16, 30), "America/Los_Angeles", "region", 2.0, False),
        (2, datetime(2026, 1, 21, 2, 0), "America/Los_Angeles", "region", 2.0, False),
        # Texas has two zones: its largest, Central, flagged as an assumption
        (3, datetime(2026, 7, 14, 14, 30), "America/Chicago", "region_multizone", 1.0, False),
    ]
    assert any("America/Chicago (region has several zones)" in n for n in f["notes"])
    # a mangled gpu_power cell leaves the run in, that field null, located
    assert con.execute("select gpu_power_w from runs where row_number = 2").fetchone()[0] is None
    assert con.execute("select row_number, column_name, value from row_findings").fetchall() == [(2, "gpu_power", "n/a")]


def test_region_table_keys_are_unique_and_zones_exist():
    import csv
    import zoneinfo
    rows = list(csv.DictReader((Path(__file__).parents[1] / "sources" / "region_timezones.csv").open(encoding="utf-8")))
    keys = [(r["iso3"], k.lower()) for r in rows for k in (r["region"], r["abbreviation"]) if k]
    assert len(keys) == len(set(keys))
    for r in rows:
        zoneinfo.ZoneInfo(r["timezone"])
        assert int(r["zones_in_region"]) >= 1 and r["source"]
