"""Small dcgm-exporter files staged as one batch (pipelines.ingest.ingest_batch, issue 24) load
what each file's own ingest loads: the same rows read, loaded and rejected, the same GPU-hour and
pod parts under each file, the same located rejects, source_files rows and totals; where a batch
meets what only a file's own staging decides (a reject, content already loaded, an error), its
files are ingested one by one, with the same result and the same Error."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pipelines.ingest as runner
from core.errors import InputError
from pipelines.warehouse import connect
from tests.telemetry_fixtures import rows_of, stable

START_MS = 1791244800000      # 2026-10-06T00:00:00Z
SERIES = ['DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",Hostname="node-a",pod="train-1"}',
          'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-aaaa",Hostname="node-a",pod="train-1"}',
          'DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-bbbb",Hostname="node-a"}',
          'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-cccc",Hostname="node-b",namespace="ml",pod="serve-2"}']
# Lines only a file's own staging handles: a bad value, a sample without its time, no GPU, a comment.
ODD_LINES = ['DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",Hostname="node-a"} abc 1791244800000',
             'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",Hostname="node-a"} 250',
             "DCGM_FI_DEV_GPU_UTIL 5 1791244800000", "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W)."]


BATCH_MAX_FILES = runner.BATCH_MAX_FILES
INGEST_BATCH = runner.ingest_batch


def sample(series: int, step: int) -> str:
    """A sample every 20 minutes of `step`: files of a few steps share GPUs and hours (a value
    of at most 96.25: a utilisation, too, within its 100 %)."""
    return f"{SERIES[series]} {step % 97}.25 {START_MS + 1_200_000 * step}"


# The same series as a long CSV export's rows, and rows only a file's own staging handles: a bad
# value, a time in another spelling (the typed read fails), no GPU, a row short of fields.
CSV_HEADER = "timestamp,__name__,Hostname,UUID,gpu,namespace,pod,value"
CSV_SERIES = ["DCGM_FI_DEV_POWER_USAGE,node-a,GPU-aaaa,0,,train-1", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION,node-a,GPU-aaaa,0,,train-1",
              "DCGM_FI_DEV_POWER_USAGE,node-a,GPU-bbbb,1,,", "DCGM_FI_DEV_GPU_UTIL,node-b,GPU-cccc,0,ml,serve-2"]
CSV_ODD_LINES = ["2026-10-06T00:00:00Z,DCGM_FI_DEV_POWER_USAGE,node-a,GPU-aaaa,0,,,abc",
                 "2026-10-06 00:00:00,DCGM_FI_DEV_POWER_USAGE,node-a,GPU-aaaa,0,,,250",
                 "2026-10-06T00:00:00Z,DCGM_FI_DEV_GPU_UTIL,,,,,,5", "2026-10-06T00:00:00Z,DCGM_FI_DEV_GPU_UTIL,node-a"]


def csv_row(series: int, step: int) -> str:
    when = datetime(2026, 10, 6) + (datetime(2026, 10, 6, 0, 20) - datetime(2026, 10, 6)) * step
    return f"{when:%Y-%m-%dT%H:%M:%SZ},{CSV_SERIES[series]},{step % 97}.25"


files = st.lists(st.lists(st.one_of(st.tuples(st.integers(0, len(SERIES) - 1), st.integers(0, 20)), st.integers(0, 3)),
                          min_size=1, max_size=12), min_size=2, max_size=6)


def write(folder: Path, bodies: list[list[Any]], shape: str = "prom") -> Path:
    """One file per body: a tuple is a sample (series, step), an int an odd line (ODD_LINES or CSV_ODD_LINES)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, body in enumerate(bodies):
        if shape == "prom":
            text = [sample(*b) if isinstance(b, tuple) else ODD_LINES[b] for b in body]
        else:
            text = [CSV_HEADER] + [csv_row(*b) if isinstance(b, tuple) else CSV_ODD_LINES[b] for b in body]
        (folder / f"host-{i:03d}.{'prom' if shape == 'prom' else 'csv'}").write_text("\n".join(text) + "\n")
    return folder


def loaded(warehouse: Path, folder: Path, batched: bool, monkeypatch) -> tuple[dict[str, Any], int]:
    """Everything one ingest of the folder wrote, by file path (file ids may differ: a batch
    sent back to file-by-file leaves a gap), and how many batches loaded."""
    monkeypatch.setattr(runner, "BATCH_MAX_FILES", BATCH_MAX_FILES if batched else 1)
    batches = []

    def counted(*args: Any) -> Any:
        done = INGEST_BATCH(*args)
        batches.append(done is not None)
        return done
    monkeypatch.setattr(runner, "ingest_batch", counted)
    warehouse.unlink(missing_ok=True)
    got: dict[str, Any] = {}
    with connect(warehouse) as con:
        try:
            results = runner.ingest(con, [folder])
            got["results"] = [(Path(r.path).name, r.status, r.kind, r.format_version, r.rows_read, r.rows_loaded,
                               r.rows_rejected, stable(r.totals), r.notes) for r in results]
        except InputError as exc:
            got["error"] = str(exc)
        path = "regexp_extract(s.path, '[^/]+$')"
        for table in ("gpu_hour_parts", "gpu_pod_parts"):
            got[table] = rows_of(con, f"select {path}, t.* exclude (file_id) from {table} t join source_files s using (file_id)")
        got["rejects"] = rows_of(con, f"select {path}, r.* exclude (file_id) from rejects r join source_files s using (file_id)")
        got["source_files"] = rows_of(con, f"""select {path}, sha256, kind, format_version, rows_read, rows_loaded, rows_rejected,
                                                      status, totals from source_files s""")
    return got, sum(batches)


@pytest.mark.parametrize("shape", ["prom", "csv"])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bodies=files)
@example(bodies=[[(0, 0), (1, 0), (0, 1), (1, 1)], [(0, 2), (1, 2), (2, 3)], [(3, 3), (1, 4)]])
@example(bodies=[[(0, 0), (1, 1)], [(0, 0), (1, 1)], [(2, 5)]])     # a copy: `unchanged`
@example(bodies=[[(0, 0), (1, 1)], [(0, 2), 0], [(2, 5)]])          # a reject: file by file
@example(bodies=[[(0, 0), (1, 1)], [(0, 2), 1], [(2, 5)]])          # untimed, or a time the typed read cannot parse
@example(bodies=[[(0, 0), (1, 1)], [(0, 2), 3], [(2, 5)]])          # a comment; a short row
def test_a_batch_loads_what_each_file_loads_alone(tmp_path_factory, monkeypatch, shape, bodies):
    folder = write(tmp_path_factory.mktemp("dumps"), bodies, shape)
    one_by_one, _ = loaded(folder / "../alone.duckdb", folder, False, monkeypatch)
    batched, batches = loaded(folder / "../batched.duckdb", folder, True, monkeypatch)
    assert batched == one_by_one
    clean = all(isinstance(b, tuple) for body in bodies for b in body)
    distinct = len({tuple(body) for body in bodies}) == len(bodies)
    if clean and distinct:
        assert batches == 1, "the files were not staged as one batch"


def test_a_batch_keeps_a_counter_reset_and_leaves_a_reading_past_its_limits_to_its_file(tmp_path, monkeypatch):
    """A counter that falls is checked reading by reading: a reset (96.25 -> 1.25 mJ) keeps the
    batch; a utilisation of 150 % is its file's own located reject, as ingested alone."""
    reset = write(tmp_path / "reset", [[(1, 96), (1, 98)], [(0, 1)]])
    alone, _ = loaded(tmp_path / "r1.duckdb", reset, False, monkeypatch)
    got, batches = loaded(tmp_path / "r2.duckdb", reset, True, monkeypatch)
    assert (got, batches, got["rejects"]) == (alone, 1, [])
    past = write(tmp_path / "past", [[(1, 96), (1, 98)], [(3, 1)]])
    (past / "host-001.prom").write_text((past / "host-001.prom").read_text().replace(" 1.25 ", " 150 "))
    alone, _ = loaded(tmp_path / "p1.duckdb", past, False, monkeypatch)
    got, batches = loaded(tmp_path / "p2.duckdb", past, True, monkeypatch)
    assert (got, batches) == (alone, 0) and [r[3] for r in got["rejects"]] == ["plausible_util"]


def test_a_batch_holds_a_gpu_hour_split_over_files_as_two_parts(tmp_path, monkeypatch):
    """The same GPU and hour in two files: a part per file, and the int_gpu_hours model joins them
    into one hour, with the energy of the files ingested one by one."""
    folder = write(tmp_path / "dumps", [[(0, 0), (1, 0), (0, 1), (1, 1)], [(0, 2), (1, 2), (1, 4)]])
    got, batches = loaded(tmp_path / "b.duckdb", folder, True, monkeypatch)
    assert batches == 1
    aaaa = [(r[0], str(r[6])) for r in got["gpu_hour_parts"] if r[2] == "GPU-aaaa"]
    assert sorted(aaaa) == [("host-000.prom", "2026-10-06 00:00:00"), ("host-001.prom", "2026-10-06 00:00:00"),
                            ("host-001.prom", "2026-10-06 01:00:00")]
    loaded(tmp_path / "a.duckdb", folder, False, monkeypatch)
    hours = [gpu_hours(tmp_path / f"{w}.duckdb") for w in "ab"]
    assert hours[0] == hours[1] and [h[:2] for h in hours[0]] == [("GPU-aaaa", h) for h in (datetime(2026, 10, 6, 0), datetime(2026, 10, 6, 1))]


def gpu_hours(warehouse: Path) -> list[tuple]:
    """The gpu_hours model over a warehouse's parts: one row per GPU and hour."""
    from core.sql import read_sql
    from pipelines.config import Config
    from pipelines.stage_inputs import apply_config
    from sources.reference_data import load_reference
    with connect(warehouse) as con:
        load_reference(con)
        apply_config(con, Config())
        return rows_of(con, f"select gpu_uuid, hour_start, energy_kwh, n_scrapes from ({read_sql('20_intermediate', 'int_gpu_hours.sql')})")


def test_an_error_in_a_batch_stops_where_the_file_by_file_ingest_stops(tmp_path, monkeypatch):
    """A line with four '}' is an Error for its file: the files before it stay loaded, the ones
    after it are not, and the message is the file's own."""
    folder = write(tmp_path / "dumps", [[(0, 0), (1, 1)], [(2, 3)], [(3, 4)]])
    (folder / "host-001.prom").write_text('DCGM_FI_DEV_POWER_USAGE{a="}}}}"} 1 1791244800000\n')
    batched, _ = loaded(tmp_path / "b.duckdb", folder, True, monkeypatch)
    one_by_one, _ = loaded(tmp_path / "a.duckdb", folder, False, monkeypatch)
    assert batched == one_by_one
    assert "host-001.prom" in batched["error"]
    assert [r[0] for r in batched["source_files"]] == ["host-000.prom"]


def test_content_already_loaded_under_another_path_is_unchanged_in_a_batch(tmp_path, monkeypatch):
    first = write(tmp_path / "first", [[(0, 0), (1, 1)], [(2, 3)]])
    later = write(tmp_path / "later", [[(0, 0), (1, 1)], [(3, 4)], [(2, 6)]])     # its first file is first/host-000's copy
    wh = tmp_path / "w.duckdb"
    with connect(wh) as con:
        runner.ingest(con, [first])
        results = runner.ingest(con, [later])
    assert [(Path(r.path).name, r.status) for r in results] == [
        ("host-000.prom", "unchanged"), ("host-001.prom", "loaded"), ("host-002.prom", "loaded")]
    assert results[0].notes == [f"same content as {(first / 'host-000.prom').resolve()}, already loaded"]


def test_scrapes_without_times_are_staged_alone(tmp_path, monkeypatch):
    """A scrape's time comes from its name or mtime, which only its own staging reads: such
    files are never batched (and load with their note)."""
    folder = tmp_path / "scrapes"
    folder.mkdir()
    for i in range(3):
        (folder / f"node-a_2026-10-06T0{i}-00-00Z.prom").write_text(
            f"{SERIES[0]} {250 + i}.5\n{SERIES[2]} {120 + i}\n")
    got, batches = loaded(tmp_path / "w.duckdb", folder, True, monkeypatch)
    assert batches == 0
    assert [r[8] for r in got["results"]] == [[f"scrape time from file_name: 2026-10-06T0{i}:00:00Z"] for i in range(3)]


@pytest.mark.parametrize("limit", ["BATCH_FILE_MAX_BYTES", "BATCH_MAX_BYTES"])
def test_files_past_the_size_limits_are_not_batched(tmp_path, monkeypatch, limit):
    folder = write(tmp_path / "dumps", [[(0, 0), (1, 1)], [(2, 3)], [(3, 4)]])
    monkeypatch.setattr(runner, limit, 10)
    got, batches = loaded(tmp_path / "w.duckdb", folder, True, monkeypatch)
    assert batches == 0 and [r[1] for r in got["results"]] == ["loaded"] * 3


def test_long_csv_files_of_another_header_or_time_spelling_start_another_batch(tmp_path, monkeypatch):
    folder = write(tmp_path / "dumps", [[(0, 0), (1, 1)], [(2, 3)], [(3, 4)], [(0, 5)], [(1, 6)]], "csv")
    three = folder / "host-002.csv"
    three.write_text(three.read_text().replace(",value", ",value,region").replace("\n", ",eu\n").replace("region,eu", "region"))
    four = folder / "host-003.csv"
    four.write_text(four.read_text().replace("T00:", " 00:").replace(":00Z", ":00").replace("T01:", " 01:"))
    batched, batches = loaded(tmp_path / "b.duckdb", folder, True, monkeypatch)
    one_by_one, _ = loaded(tmp_path / "a.duckdb", folder, False, monkeypatch)
    assert batched == one_by_one and batches == 1          # files 0-1 together; 2, 3 and 4 each alone
    assert [r[1] for r in batched["results"]] == ["loaded"] * 5


def test_files_that_do_not_batch_are_looked_at_once_each(tmp_path, monkeypatch):
    """A run of 40 files that never batch (scrapes without times) looks at each file once to
    decide, not once per file and position (a month holds tens of thousands of files)."""
    folder = tmp_path / "scrapes"
    folder.mkdir()
    for i in range(40):
        (folder / f"node-a_2026-10-06T{i % 24:02d}-{i // 24:02d}-00Z.prom").write_text(f"{SERIES[0]} {250 + i}.5\n")
    files = sorted(folder.iterdir())
    looked: list[Path] = []
    stat = Path.stat
    monkeypatch.setattr(Path, "stat", lambda self, *a, **k: (looked.append(self), stat(self, *a, **k))[1])
    assert all(runner.batch_from(files, i, "auto", None, set()) == [] for i in range(len(files)))
    assert len(looked) <= 2 * len(files)      # its size, and detection's own look; 820 when each position stat'ed the rest
