"""A long CSV's typed read (time and value parsed by DuckDB's CSV parser, issue 24) against its
text read: for any file, the same rows read, loaded and rejected, the same GPU-hour and pod parts
and the same located rejects; a cell the typed read cannot parse sends the file through the text
read instead of failing it."""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pipelines.ingest as runner
from core.errors import InputError
from pipelines.warehouse import connect
from sources import prom_export, tabular
from sources.base import HEAD_BYTES, Restage, read_head
from tests.telemetry_fixtures import ingested

HEADER = "timestamp,__name__,Hostname,UUID,gpu,modelName,namespace,pod,value"
START = datetime(2026, 10, 6)
START_S = 1791244800          # START in epoch seconds
METRICS = ["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL", "", "not a metric"]
UUIDS = ["GPU-aaaa0000-0000-0000-0000-000000000000", "GPU-bbbb0000-0000-0000-0000-000000000000", ""]
# Cells the two reads could take differently: offsets, blanks, 24:00, epoch numbers, lowercase,
# impossible dates; numbers with blanks, underscores, hex, exponents past a double, sentinels.
ODD_TIMES = ["", " 2026-10-06T01:00:00Z", "2026-10-06T01:00:00Z ", "2026-10-06T24:00:00Z", "2026-10-06T01:00:00+02:00",
             "2026-10-06 01:00:00", "2026-10-06T01:00:00.250Z", "1791248400", "1791248400000", "2026-10-06t01:00:00z",
             "2026-02-30T00:00:00Z", "2026-10-6T01:00:00Z", "02026-10-06T01:00:00Z", "yesterday"]
ODD_VALUES = ["", " 1.5", "1.5 ", "1_000", "0x10", "1e400", "-1", "NaN", "inf", "-0", ".5", "5.", "abc", "1,5",
              "9223372036854775794", "2147483632", "+3"]


# the spellings the typed read takes (sources.prom_export.TYPED_TIMES), as strftime writes them
TIME_FORMATS = ["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.000Z", "%Y-%m-%d %H:%M:%S"]


def row_cells(i: int, metric: int, uuid: int, pod: int, time: str | None, value: str | None, fmt: str = TIME_FORMATS[0]) -> list[str]:
    """A sample's cells; times are distinct per row, so no series has two samples at one time.
    A counter rises with the row; a gauge stays within any board's limits and 100 %."""
    t = (START + timedelta(seconds=7 * i)).strftime(fmt) if time is None else time
    v = (f"{100 + i * 1.25:.3f}" if metric == 0 else f"{i * 1.25 % 100:.3f}") if value is None else value
    return [t, METRICS[metric], "node-a", UUIDS[uuid], str(uuid), "NVIDIA A100-SXM4-80GB", "ns", f"pod-{pod}", v]


def csv_cell(c: str) -> str:
    return f'"{c}"' if "," in c else c


rows = st.lists(st.tuples(st.integers(0, len(METRICS) - 1), st.integers(0, len(UUIDS) - 1), st.integers(0, 2),
                          st.one_of(st.none(), st.none(), st.sampled_from(ODD_TIMES)),
                          st.one_of(st.none(), st.none(), st.sampled_from(ODD_VALUES))), max_size=40)


def write(path: Path, body: list[tuple[int, int, int, str | None, str | None]], fmt: str = TIME_FORMATS[0]) -> Path:
    """Good samples past the head detection reads (which decides for the typed read), then
    `body`, which may hold cells the typed read cannot parse; times written in `fmt`."""
    lines, size = [HEADER], 0
    while size <= HEAD_BYTES:
        lines.append(",".join(row_cells(len(lines), 0, 0, 0, None, None, fmt)))
        size += len(lines[-1]) + 1
    first = len(lines)
    lines += [",".join(csv_cell(c) for c in row_cells(first + i, *r, fmt)) for i, r in enumerate(body)]
    path.write_text("\n".join(lines) + "\n")
    return path


def ingest(warehouse: Path, path: Path, typed: bool, monkeypatch) -> dict[str, Any]:
    """Ingest with the typed read on or off."""
    monkeypatch.setattr(prom_export.PromCsvReader, "typed_read", typed)
    return ingested(warehouse, path)


@pytest.fixture
def restaged(monkeypatch):
    """The restage requests the typed read made (each is one more staging of the file)."""
    seen: list[dict] = []
    real = runner.restage

    def spy(con, options):
        if options.get("text_read"):
            seen.append(options)
        return real(con, options)

    monkeypatch.setattr(runner, "restage", spy)
    return seen


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=rows, fmt=st.sampled_from(TIME_FORMATS))
@example(body=[(1, 1, 1, None, None)] * 5, fmt=TIME_FORMATS[0])
@example(body=[(3, 0, 0, None, None)], fmt=TIME_FORMATS[0])      # an empty metric cell (5b801cf)
@example(body=[(1, 0, 0, None, "abc")], fmt=TIME_FORMATS[0])
@example(body=[(1, 0, 0, "2026-10-06T01:00:00+02:00", None)], fmt=TIME_FORMATS[0])
@example(body=[(1, 0, 0, "2026-10-06T01:00:00.12Z", None)], fmt=TIME_FORMATS[1])
@example(body=[(0, 0, 0, None, "9223372036854775794"), (1, 0, 0, None, "NaN"), (1, 1, 0, None, "-1")], fmt=TIME_FORMATS[2])
def test_typed_read_loads_what_the_text_read_loads(tmp_path, monkeypatch, restaged, body, fmt):
    path = write(tmp_path / "samples.csv", body, fmt)
    typed = ingest(tmp_path / "typed.duckdb", path, True, monkeypatch)
    text = ingest(tmp_path / "text.duckdb", path, False, monkeypatch)
    assert typed == text


@pytest.mark.parametrize("fmt", TIME_FORMATS)
def test_a_clean_file_is_read_typed_and_a_late_bad_cell_restages_it(tmp_path, monkeypatch, restaged, fmt):
    clean = write(tmp_path / "clean.csv", [(1, 1, 1, None, None)] * 20, fmt)
    # the head's spelling, as the strptime format DuckDB's parser is given
    assert prom_export.typed_time_format(read_head(clean), 0, 8) == fmt.replace(".000Z", ".%gZ")
    ingest(tmp_path / "a.duckdb", clean, True, monkeypatch)
    assert restaged == []
    late = write(tmp_path / "late.csv", [(1, 1, 1, None, None)] * 20 + [(1, 1, 1, None, "n/a")], fmt)
    got = ingest(tmp_path / "b.duckdb", late, True, monkeypatch)
    assert len(restaged) == 1
    read, loaded, rejected = got["result"][1:4]
    assert (read - loaded, rejected) == (1, 1) and read > 20
    assert [r[2] for r in got["rejects"]] == ["sample_syntax"]


def test_a_head_the_typed_read_cannot_take_is_read_as_text_from_the_start(tmp_path, monkeypatch, restaged):
    """Epoch seconds in the head: no typed read is tried, so no second staging either."""
    path = tmp_path / "epoch.csv"
    path.write_text(HEADER + "\n" + "".join(f"{START_S + 10 * i},DCGM_FI_DEV_POWER_USAGE,node-a,{UUIDS[0]},0,"
                                            f"NVIDIA A100-SXM4-80GB,ns,pod-0,{200 + i}\n" for i in range(10)))
    got = ingest(tmp_path / "e.duckdb", path, True, monkeypatch)
    assert restaged == [] and got["result"][1:4] == (10, 10, 0)


def test_restage_is_what_a_conversion_error_raises(tmp_path):
    """The typed read's failure is a Restage (rolled back, staged again), never the user's Error."""
    path = write(tmp_path / "bad.csv", [(1, 0, 0, None, "abc")])
    head = read_head(path)
    reader = prom_export.PromCsvReader()
    with connect(tmp_path / "r.duckdb") as con:
        con.execute("begin transaction")
        con.execute("create or replace temp table _rejects (row_number bigint, column_name varchar, check_name varchar, "
                    "value varchar, message varchar)")
        with pytest.raises(Restage) as caught:
            reader.stage(con, head, {})
        assert caught.value.options == {"text_read": True}
        con.execute("rollback")


def test_the_typed_read_gives_duckdb_an_estimate_of_the_rows(tmp_path):
    """The sniffed read's sample is DuckDB's estimate of the file's rows (issue 24: a GB planned as
    ~42 rows grouped 0.25 s slower on two cores); the text read keeps the sniffer off."""
    path = write(tmp_path / "many.csv", [(1, 1, 1, None, None)] * 2000)
    rows = sum(1 for _ in path.open()) - 1
    head = read_head(path)
    typed = prom_export.PromCsvReader().typed_samples_sql(head, {})
    assert typed is not None

    def estimate(sql: str) -> int:
        plan = duckdb.sql("explain " + sql).fetchall()[0][1]
        return max(int(m.replace(",", "")) for m in re.findall(r"~([\d,]+) rows?", plan))
    assert rows / 4 <= estimate(typed[0]) <= rows * 4
    assert estimate(f"select * from {tabular.csv_read(head)}") < rows / 4


def test_a_file_the_sniffer_cannot_read_is_judged_by_the_text_read(tmp_path, monkeypatch, restaged):
    """Line breaks that change from LF to CRLF inside the head: the typed read's sniffer fails
    first; the text read then gives its own Error, as it does with the typed read off."""
    path = write(tmp_path / "mixed.csv", [(1, 1, 1, None, None)] * 5)
    text = path.read_text().splitlines()
    path.write_text("\n".join(text[:20]) + "\n" + "\r\n".join(text[20:]) + "\r\n")
    errors = []
    for typed in (True, False):
        with pytest.raises(InputError) as caught:
            ingest(tmp_path / f"m{typed}.duckdb", path, typed, monkeypatch)
        errors.append(str(caught.value))
    assert len(restaged) == 1 and errors[0] == errors[1]


@pytest.mark.parametrize("typed", [True, False], ids=["typed read first", "text read"])
def test_a_row_short_of_fields_is_a_located_reject_and_one_too_long_an_error(tmp_path, monkeypatch, typed):
    """A short row is the row's problem, not the file's: read again padded, it is one reject at its
    own row (as in every CSV reader); a row with a field too many stops the file, since which
    cell is the extra one is unknown."""
    path = write(tmp_path / "short.csv", [(1, 1, 1, None, None)] * 6)
    lines = path.read_text().splitlines()
    lines[-3] = lines[-3].rsplit(",", 2)[0]          # no pod, no value
    path.write_text("\n".join(lines) + "\n")
    got = ingest(tmp_path / "s.duckdb", path, typed, monkeypatch)
    read, loaded, rejected = got["result"][1:4]
    assert (read, loaded, rejected) == (len(lines) - 1, len(lines) - 2, 1)
    assert [(r[0], r[2]) for r in got["rejects"]] == [(len(lines) - 3, "sample_syntax")]
    lines[-3] = lines[-2] + ",extra"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"Line: {len(lines) - 2}: Expected Number of Columns: 9 Found: 10"):
        ingest(tmp_path / "l.duckdb", path, typed, monkeypatch)


def test_a_crlf_file_is_read_typed_like_the_text_read(tmp_path, monkeypatch, restaged):
    """Windows line breaks throughout: the typed read's sniffer takes CRLF as the break (no
    restage), and both reads load the same samples."""
    path = write(tmp_path / "crlf.csv", [(1, 1, 1, None, None)] * 30)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    typed = ingest(tmp_path / "t.duckdb", path, True, monkeypatch)
    assert restaged == []
    assert typed == ingest(tmp_path / "x.duckdb", path, False, monkeypatch)
    assert typed["result"][2:4] == (typed["result"][1], 0)
