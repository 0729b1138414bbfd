"""Fuzzing every reader with mutated valid files: truncated, bytes flipped, lines duplicated or
dropped, delimiter changed, gzip cut short. Whatever the bytes, ingest ends in one of two ways:

* a load with balanced counts (rows_read = rows_loaded + rows_rejected, every rejected row located), or
* an InputError (the CLI's one `Error:` line), with the warehouse as it was.

Any other exception is a bug. Examples are bounded (and derandomized, so the suite is repeatable);
MB_FUZZ_EXAMPLES=500 runs a deeper search locally.
"""
from __future__ import annotations

import gzip
import itertools
import os

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import InputError
from pipelines.ingest import ingest
from pipelines.warehouse import connect
from tests.conftest import DATA

EXAMPLES = int(os.environ.get("MB_FUZZ_EXAMPLES", "15"))
DEEP = bool(os.environ.get("MB_FUZZ_EXAMPLES"))
# Bounded runs are derandomized and ignore the local example database: the same examples everywhere.
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not DEEP,
                database=settings.default.database if DEEP else None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

DCGM_SCRAPE = (
    "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
    + "".join(f'DCGM_FI_DEV_POWER_USAGE{{gpu="{g}",UUID="GPU-{g:04d}",modelName="NVIDIA A100-SXM4-40GB",'
              f'Hostname="h1",namespace="ns{g}",pod="p{g}"}} {300 + g}.5 {1791244800000 + 30000 * t}\n'
              for t in range(4) for g in range(2))
    + "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
    + "".join(f'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="{g}",UUID="GPU-{g:04d}",Hostname="h1"}} '
              f'{68697711779 + 9000000 * t} {1791244800000 + 30000 * t}\n' for t in range(4) for g in range(2))
)

# (reader, seed file name, its bytes): one valid file per reader and container.
SEEDS = {
    "focus": ("focus.csv", (DATA / "focus" / "focus_1.2_minimal.csv").read_bytes()),
    "focus-gz": ("focus.csv.gz", gzip.compress((DATA / "focus" / "focus_1.2_minimal.csv").read_bytes(), mtime=0)),
    "aws-cur": ("cur.csv", (DATA / "bad" / "cur_duplicate_line_item_ids.csv").read_bytes()),
    "aws-cur2": ("cur2.csv", (DATA / "aws_cur2" / "cur2_gpu_instances_map_columns.csv").read_bytes()),
    "azure-cost": ("azure.csv", (DATA / "azure" / "azure_ea_amortized_reservation_gpu.csv").read_bytes()),
    "gcp-billing-csv": ("gcp.csv", (DATA / "gcp" / "gcp_standard_export_dotted_columns.csv").read_bytes()),
    "gcp-billing-jsonl": ("gcp.jsonl", (DATA / "gcp" / "gcp_detailed_export_with_credits.jsonl").read_bytes()),
    "codecarbon": ("emissions.csv", (DATA / "codecarbon" / "mixed_versions_concatenated.csv").read_bytes()),
    "dcgm-prom": ("node_2026-10-06T00-00-00.prom", DCGM_SCRAPE.encode()),
    "disclosure": ("model.yaml", (DATA / "disclosures" / "published" / "bloom-176b-dynamic.yaml").read_bytes()),
    "hf-model-card": ("README.md", (DATA / "disclosures" / "cards" / "string_with_unit_17g.md").read_bytes()),
    "work": ("work.csv", (DATA / "work" / "work_log_dense_and_moe.csv").read_bytes()),
    "work-jsonl": ("work.jsonl", (DATA / "work" / "work_log_serving.jsonl").read_bytes()),
}


@st.composite
def mutated(draw, seed: bytes) -> bytes:
    """The seed with one to three mutations applied in turn."""
    data = seed
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "flip", "dup_line", "drop_line", "delimiter", "insert", "gzip_cut"]))
        lines = data.split(b"\n")
        if op == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif op == "flip" and data:
            buf = bytearray(data)
            for _ in range(draw(st.integers(1, 4))):
                i = draw(st.integers(0, len(buf) - 1))
                buf[i] = draw(st.sampled_from([buf[i] ^ 0xFF, 0, ord(","), ord('"'), ord("\n"), ord("\r"), 0xC3]))
            data = bytes(buf)
        elif op == "dup_line":
            i = draw(st.integers(0, len(lines) - 1))
            data = b"\n".join(lines[: i + 1] + lines[i:])
        elif op == "drop_line":
            i = draw(st.integers(0, len(lines) - 1))
            data = b"\n".join(lines[:i] + lines[i + 1:])
        elif op == "delimiter":
            old, new = draw(st.sampled_from([(b",", b";"), (b",", b"\t"), (b",", b"|"), (b"\n", b"\r\n"), (b'"', b"'")]))
            data = data.replace(old, new)
        elif op == "insert":
            i = draw(st.integers(0, len(data)))
            junk = draw(st.sampled_from([b"NaN", b"-inf", b"1e309", b"\xff\xfe", b"NULL", b"=cmd|' /C calc'!A0",
                                         b'"unterminated', b"\x00", "😀 é".encode(), b"9223372036854775794"]))
            data = data[:i] + junk + data[i:]
        elif op == "gzip_cut" and data[:2] == b"\x1f\x8b":
            data = data[: draw(st.integers(10, max(10, len(data) - 1)))]
    return data


def lineage(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("select file_id, sha256, status from source_files order by file_id").fetchall()


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_mutated_inputs_load_balanced_or_fail_cleanly(tmp_path_factory, seed):
    name, data = SEEDS[seed]
    root = tmp_path_factory.mktemp(f"fuzz-{seed}")
    con = connect(root / "wh.duckdb")
    counter = itertools.count()

    @FUZZ
    @given(mutated(data))
    def check(blob: bytes) -> None:
        folder = root / f"case{next(counter)}"
        folder.mkdir()
        path = folder / name
        path.write_bytes(blob)
        before = lineage(con)
        try:
            (res,) = ingest(con, [path])
        except InputError as exc:
            assert str(exc).startswith(str(path)), str(exc)
            assert lineage(con) == before               # rolled back: nothing half-written
            return
        assert res.status in ("loaded", "unchanged")
        assert res.rows_read == res.rows_loaded + res.rows_rejected
        if res.status == "loaded":
            fid = con.execute("select file_id from source_files where sha256 = ? and status = 'loaded'",
                              [res.sha256]).fetchone()[0]
            located = con.execute("select count(distinct row_number), count(*) filter (where row_number is null) "
                                  "from rejects where file_id = ?", [fid]).fetchone()
            assert located == (res.rows_rejected, 0)

    try:
        check()
        # the seed itself still loads after all that: the connection is in a clean state
        clean = root / "clean"
        clean.mkdir()
        (clean / name).write_bytes(data)
        (res,) = ingest(con, [clean / name])
        assert res.rows_read == res.rows_loaded + res.rows_rejected
    finally:
        con.close()


# Found by this fuzzer (MB_FUZZ_EXAMPLES=150): label pairs separated by ';' instead of ','.
SEMICOLON_LABELS = ('DCGM_FI_DEV_POWER_USAGE{gpu="0";UUID="GPU-0000";Hostname="h1"} 300.5 1791244800000\n'
                    'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-0000",Hostname="h1"} 301.5 1791244830000\n')


def test_dcgm_labels_separated_by_semicolons_are_rejected_not_a_crash(tmp_path):
    path = tmp_path / "node_2026-10-06T00-00-00.prom"
    path.write_text(SEMICOLON_LABELS)
    con = connect(tmp_path / "wh.duckdb")
    (res,) = ingest(con, [path])
    assert (res.rows_read, res.rows_loaded, res.rows_rejected) == (2, 1, 1)
