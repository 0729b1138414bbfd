"""CodeCarbon emissions.csv: every real layout loads, totals match the raw file, defects are
located rejects, and the naive local end timestamp becomes UTC in the right zone."""
from __future__ import annotations

import csv
import gzip
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.sql import read_sql
from pipelines.ingest import ingest
from pipelines.warehouse import connect
from schemas.runs import Runs
from tests.conftest import DATA, SAMPLES, ingest_json

CC_SAMPLES = sorted(p.name for p in (SAMPLES / "codecarbon").glob("*")) if SAMPLES.is_dir() else []
FIXTURES = DATA / "codecarbon"
AIRA = "third-party__ArkNightmaster-AIRA__LLaMA-Factory-emissions.csv"

# Known defects of the real files, each a located reject (0 = a clean file). The official
# examples of 2020-2023 hold synthetic values (8 kWh in 34 s, 847 kW): no host draws that.
EXPECTED_REJECTS = {
    "codecarbon-repo__examples-emissions__2020-08-12_1af0333b.csv": 100,   # Excel mm:ss.0 timestamps
    "codecarbon-repo__examples-emissions__2020-11-09_27655e1a.csv": 100,   # + 2020-04-31, 2020-06-31
    "codecarbon-repo__examples-emissions__2020-12-01_023f9b45.csv": 100,
    "codecarbon-repo__examples-emissions__2021-07-08_3fa53381.csv": 100,
    "codecarbon-repo__examples-emissions__2021-07-14_833ca82a.csv": 100,   # + two rows glued on one line
    "codecarbon-repo__examples-emissions__2021-09-16_3201bbdf.csv": 100,
    "codecarbon-repo__examples-emissions__2023-08-02_ef967f52.csv": 100,
    "codecarbon-repo__examples-emissions__2024-06-08_a4c8d302.csv": 2,     # blank emissions/energy
    "codecarbon-repo__tests__emissions_invalid_headers.csv": 0,
    "codecarbon-repo__tests__emissions_valid_headers.csv": 0,
    "third-party__Akialess-nnLandmark__emissions.csv": 0,
    "third-party__Ambroise012-Unstructured-pruning-Llama__emissions.csv": 0,
    AIRA: 0,
}
EXAMPLE_2024 = "codecarbon-repo__examples-emissions__2024-06-08_a4c8d302.csv"


def rejected_rows(warehouse: Path, path: Path) -> list[int]:
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = [r[0] for r in con.execute("""select distinct r.row_number from rejects r join source_files f using (file_id)
                                         where f.path = ? order by 1""", [str(path.resolve())]).fetchall()]
    con.close()
    return rows


def raw_sums(path: Path, skip_rows: list[int]) -> tuple[int, float, float]:
    """Runs, energy and emissions straight from the file, without the reader: DuckDB's own CSV
    reader, all text, the rejected rows left out, each run_id counted once by its row with the
    longest duration (CodeCarbon appends running totals); a row without run_id is a run."""
    con = duckdb.connect()
    con.execute("create table skip (n bigint)")
    if skip_rows:
        con.executemany("insert into skip values (?)", [(n,) for n in skip_rows])
    read = ("select row_number() over () as n, * from read_csv(?, all_varchar = true, header = true, "
            "null_padding = true, strict_mode = false)")
    cols = {c.strip().lower(): c for c in con.sql(read, params=[str(path)]).columns}

    def cell(name: str) -> str:
        return f'nullif(trim("{cols[name]}"), \'\')' if name in cols else "null"

    return con.execute(f"""
        with rows as (
            select coalesce({cell('run_id')}, n::varchar) as run, {cell('duration')}::double as d,
                   try_cast({cell('energy_consumed')} as double) as e, try_cast({cell('emissions')} as double) as kg
            from ({read}) where n not in (select n from skip)),
        last as (select arg_max(e, d) as e, arg_max(kg, d) as kg from rows group by run)
        select count(*), coalesce(sum(e), 0), coalesce(sum(kg), 0) from last""", [str(path)]).fetchone()


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
    assert f["totals"]["runs"] == n and f["totals"]["snapshot_rows"] == f["rows_loaded"] - n
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


# ---------------------------------------------------------------- runs written as snapshots

def run_month(warehouse: Path) -> list[tuple]:
    """The run_month mart's model over the loaded runs: (run_id, snapshots, energy, start, end,
    file_id) per run, by end."""
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute(f"""select run_id, snapshots, energy_kwh, start_utc, end_utc, file_id
                           from ({read_sql('30_marts', 'run_month.sql')}) order by end_utc""").fetchall()
    con.close()
    return rows


def snapshot_file(template: Path, out: Path) -> Path:
    """Two runs in `template`'s layout (its header and first row): run A flushed 8 times with
    running totals (CodeCarbon's append mode), run B written once."""
    with template.open(encoding="utf-8", newline="") as fh:
        header, first = list(csv.reader(fh))[:2]
    names = [h.strip().lower() for h in header]
    at = {n: names.index(n) for n in names if n}
    scaled = [n for n in ("duration", "emissions", "cpu_energy", "gpu_energy", "ram_energy", "energy_consumed") if n in at]
    end = datetime.fromisoformat(first[at["timestamp"]].strip())
    rows = []
    for k, run_id in [*((k, "aaaaaaaa-0000-4000-8000-00000000000a") for k in range(1, 9)),
                      (8, "bbbbbbbb-0000-4000-8000-00000000000b")]:
        row = list(first)
        for n in scaled:
            row[at[n]] = repr(float(first[at[n]]) * k / 8)
        row[at["run_id"]] = run_id
        when = end + timedelta(seconds=float(first[at["duration"]]) * (k - 8) / 8 + (3600 * 24 if run_id[0] == "b" else 0))
        row[at["timestamp"]] = when.strftime("%Y-%m-%dT%H:%M:%S")
        rows.append(row)
    with out.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, *rows])
    return out


# every layout with a run_id: 2.3 (.bak, padded), 2.8 (32 columns), 3.x (38, cloud columns moved last or not)
RUN_ID_LAYOUTS = ["padded_headers.csv.bak", "us_region_names_its_zone_mixed_gpu_models.csv",
                  "reordered_columns_cloud_last.csv", "run_on_a_team_host.csv"]


@pytest.mark.parametrize("template", RUN_ID_LAYOUTS)
def test_eight_snapshots_of_a_run_are_one_run_in_every_layout(warehouse, tmp_path, template):
    path = snapshot_file(FIXTURES / template, tmp_path / "emissions.csv")
    (f,) = ingest_json(warehouse, path)["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (9, 9, 0)   # every snapshot row loads, traceable
    last = float(next(csv.DictReader((FIXTURES / template).open(encoding="utf-8")))[
        next(k for k in csv.DictReader((FIXTURES / template).open(encoding="utf-8")).fieldnames
             if k.strip() == "energy_consumed")])
    assert f["totals"]["runs"] == 2 and f["totals"]["snapshot_rows"] == 7
    assert f["totals"]["energy_kwh"] == pytest.approx(2 * last)
    runs = run_month(warehouse)
    assert [(r[0], r[1]) for r in runs] == [("aaaaaaaa-0000-4000-8000-00000000000a", 8),
                                            ("bbbbbbbb-0000-4000-8000-00000000000b", 1)]
    assert [r[2] for r in runs] == [pytest.approx(last), pytest.approx(last)]


def test_a_runs_span_is_first_start_to_last_end(warehouse):
    ingest_json(warehouse, FIXTURES / "run_written_as_8_snapshots.csv")
    (a, b) = run_month(warehouse)
    # run A: first flush 09:15 after 900 s, last 11:00 (Europe/Berlin, UTC+1 in March)
    assert (a[1], a[2], a[3], a[4]) == (8, pytest.approx(0.605), datetime(2026, 3, 2, 8), datetime(2026, 3, 2, 10))
    assert (b[1], b[2]) == (1, pytest.approx(0.15125))


def test_totals_that_decrease_are_a_finding_and_runs_kept_apart(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "run_id_totals_decrease.csv")["files"]
    assert (f["rows_loaded"], f["rows_rejected"], f["totals"]["runs"]) == (3, 0, 3)
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select row_number, column_name, check_name from row_findings").fetchall() == [
        (3, "duration", "snapshots_decrease")]
    con.close()
    assert len(run_month(warehouse)) == 3


def test_a_run_id_on_other_hardware_is_a_finding_and_another_run(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "run_id_other_hardware.csv")["files"]
    assert (f["rows_loaded"], f["totals"]["runs"]) == (2, 2)
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select row_number, check_name from row_findings order by 1").fetchall() == [
        (1, "run_id_other_hardware"), (2, "run_id_other_hardware")]


def test_shared_example_run_8a1d9822_counts_once(samples, warehouse):
    (f,) = ingest_json(warehouse, samples / "codecarbon" / EXAMPLE_2024)["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (28, 26, 2)
    runs = {r[0]: r for r in run_month(warehouse)}
    run = runs["8a1d9822-56c9-4c52-8497-5a2e32dd5b03"]
    assert run[1] == 6 and run[2] == pytest.approx(6.403828607971138e-05)   # its last snapshot, not the sum of six
    assert f["totals"]["runs"] == 19 and f["totals"]["snapshot_rows"] == 7


@pytest.mark.parametrize("copy", ["crlf", "gzip"])
def test_a_copy_in_another_folder_adds_no_run(warehouse, tmp_path, copy):
    src = FIXTURES / "run_written_as_8_snapshots.csv"
    ingest_json(warehouse, src)
    (tmp_path / "other").mkdir()
    data = src.read_bytes().replace(b"\n", b"\r\n") if copy == "crlf" else src.read_bytes()
    dup = tmp_path / "other" / ("emissions.csv" if copy == "crlf" else "emissions.csv.gz")
    dup.write_bytes(data if copy == "crlf" else gzip.compress(data))
    (again,) = ingest_json(warehouse, dup)["files"]
    assert again["status"] == "loaded" and again["rows_loaded"] == 9
    assert again["totals"]["runs"] == 0 and again["totals"]["energy_kwh"] == 0
    runs = run_month(warehouse)   # each run once, from the file loaded first; its rows in both files behind it
    assert [(r[1], r[2], r[5]) for r in runs] == [(16, pytest.approx(0.605), 1), (2, pytest.approx(0.15125), 1)]


def test_a_later_snapshot_in_a_new_file_supersedes_the_loaded_one(warehouse, tmp_path):
    lines = (FIXTURES / "run_written_as_8_snapshots.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    early = tmp_path / "a" / "emissions.csv"
    early.parent.mkdir()
    early.write_text("".join(lines[:5]), encoding="utf-8")          # header + run A's first 4 snapshots
    ingest_json(warehouse, early)
    assert [(r[1], r[2]) for r in run_month(warehouse)] == [(4, pytest.approx(0.3025))]
    (f,) = ingest_json(warehouse, FIXTURES / "run_written_as_8_snapshots.csv")["files"]
    assert f["totals"]["runs"] == 2
    assert [(r[1], r[2]) for r in run_month(warehouse)] == [(12, pytest.approx(0.605)), (1, pytest.approx(0.15125))]


# ---------------------------------------------------------------- values no run can have

def located(warehouse: Path, table: str) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute(f"select row_number, column_name, check_name, value from {table} order by 1, 2").fetchall()
    con.close()
    return rows


def test_nan_energy_and_infinite_emissions_are_rejects(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "non_finite_energy_and_emissions.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (4, 1, 3)
    # 1e400 is read as infinity: a reject at its row, not a file stopped by a start time out of range
    assert located(warehouse, "rejects") == [(1, "energy_consumed", "finite", "nan"), (2, "emissions", "finite", "inf"),
                                             (4, "duration", "finite", "1e400")]


def test_gpu_count_0_with_gpu_energy_is_a_finding(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "gpu_count_0_with_gpu_energy.csv")["files"]
    assert (f["rows_loaded"], f["rows_rejected"]) == (1, 0)
    assert located(warehouse, "row_findings") == [(1, "gpu_count", "gpu_energy_without_gpu", "0")]


def test_energy_in_wh_beyond_the_hardware_is_a_reject(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "energy_in_wh_in_kwh_column.csv")["files"]
    assert (f["rows_loaded"], f["rows_rejected"]) == (0, 1)
    assert located(warehouse, "rejects") == [(1, "energy_consumed", "power_within_hardware", "3480")]
    con = duckdb.connect(str(warehouse), read_only=True)
    assert "Wh" in con.execute("select message from rejects").fetchone()[0]


def test_energy_parts_that_do_not_add_up_are_a_finding(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "energy_parts_do_not_add_up.csv")["files"]
    assert (f["rows_loaded"], f["rows_rejected"], f["totals"]["energy_kwh"]) == (1, 0, pytest.approx(0.6025))
    assert located(warehouse, "row_findings") == [(1, "energy_consumed", "energy_parts_sum", "0.6025")]


def test_a_value_under_a_blank_header_name_is_a_reject(warehouse):
    (f,) = ingest_json(warehouse, FIXTURES / "value_under_blank_header.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (2, 1, 1)
    assert located(warehouse, "rejects") == [(2, "column 19 (no name)", "value_under_blank_header", "2021-09-20T12:00:00")]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flushes=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=3), order=st.randoms())
def test_any_number_of_flushes_in_any_row_order_counts_each_run_once(tmp_path_factory, flushes, order):
    """Runs flushed 1..6 times, rows in any order: rows read = loaded, runs = run_ids, energy =
    the sum of each run's last snapshot."""
    lines = (FIXTURES / "run_written_as_8_snapshots.csv").read_text(encoding="utf-8").splitlines()
    header, template = lines[0], lines[1].split(",")
    names = header.split(",")
    rows, lasts = [], []
    for r, n in enumerate(flushes):
        for k in range(1, n + 1):
            row = list(template)
            row[names.index("run_id")] = f"{r:08d}-0000-4000-8000-000000000000"
            row[names.index("timestamp")] = f"2026-03-0{r + 1}T{9 + k:02d}:00:00"
            row[names.index("duration")] = str(3600.0 * k)
            row[names.index("energy_consumed")] = str(0.3 * k)
            row[names.index("emissions")] = str(0.1 * k)
            row[names.index("cpu_energy")] = str(0.3 * k)
            row[names.index("gpu_energy")] = row[names.index("ram_energy")] = "0"
            rows.append(",".join(row))
        lasts.append(0.3 * n)
    order.shuffle(rows)
    d = tmp_path_factory.mktemp("flushes")
    (d / "emissions.csv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    (f,) = ingest_json(d / "wh.duckdb", d / "emissions.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (len(rows), len(rows), 0)
    assert (f["totals"]["runs"], f["totals"]["snapshot_rows"]) == (len(flushes), len(rows) - len(flushes))
    assert f["totals"]["energy_kwh"] == pytest.approx(sum(lasts))


def test_a_gpu_count_pue_or_duration_no_host_has_is_a_reject(warehouse):
    """Each would raise the power a row may claim (or push its start out of the calendar) without
    bound: 1e26 GPUs, PUE 40, a run of 1e15 s (31 million years)."""
    (f,) = ingest_json(warehouse, FIXTURES / "gpu_count_pue_and_duration_no_host_has.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (4, 1, 3)
    assert located(warehouse, "rejects") == [(1, "gpu_count", "gpus_within_host", "1e26"), (2, "pue", "pue_within_limits", "40"),
                                             (3, "duration", "window_within_calendar", "1e15")]
