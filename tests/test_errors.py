"""Structural problems: one `Error:` line, exit 1, no traceback, the warehouse unchanged."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.conftest import DATA, ingest_json, run_cli


def table_state(wh: Path) -> tuple:
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return tuple(con.execute(f"select count(*) from {t}").fetchone()[0]
                     for t in ("source_files", "rejects", "charges", "gpu_hour_parts"))
    finally:
        con.close()


@pytest.mark.parametrize("name, message", [
    ("bad/not_a_known_format.csv", "not a known input format"),
    ("bad/focus_missing_billedcost_and_currency.csv", "not a known input format"),
    ("bad/focus_missing_chargecategory.csv", "missing required column ChargeCategory"),
    ("bad/empty_file.csv", "empty file"),
])
def test_structural_error_is_one_line_and_changes_nothing(warehouse, name, message):
    ingest_json(warehouse, DATA / "focus" / "focus_1.2_minimal.csv")
    before = table_state(warehouse)
    code, out, err = run_cli("ingest", str(DATA / name), "--warehouse", str(warehouse))
    assert code == 1
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], err
    assert str(DATA / name) in lines[0]
    assert table_state(warehouse) == before


def test_wrong_kind_names_the_right_one(warehouse):
    code, _, err = run_cli("ingest", str(DATA / "focus" / "focus_1.2_minimal.csv"), "--kind", "dcgm-prom",
                           "--warehouse", str(warehouse))
    assert code == 1 and "pass --kind focus" in err.lower() and "Traceback" not in err


def test_row_level_problems_go_to_rejects_with_location(warehouse):
    (f,) = ingest_json(warehouse, DATA / "focus" / "focus_1.2_bad_rows.csv")["files"]
    assert f["rows_read"] == 4 and f["rows_rejected"] == 2 and f["rows_loaded"] == 2
    con = duckdb.connect(str(warehouse), read_only=True)
    rej = con.execute("select row_number, column_name, check_name, value from rejects order by row_number").fetchall()
    assert (2, "BilledCost", "parses_as_decimal", "12,50") in rej
    assert any(r[0] == 4 and r[1] == "charge_category" for r in rej)


def mixed_breaks(lines: list[bytes], at: int, first: bytes) -> bytes:
    """The lines with `first` ending the first `at` of them and the other break the rest."""
    other = b"\r\n" if first == b"\n" else b"\n"
    return b"".join(ln + first for ln in lines[:at]) + b"".join(ln + other for ln in lines[at:])


@pytest.mark.parametrize("first", [b"\n", b"\r\n"], ids=["LF then CRLF", "CRLF then LF"])
@pytest.mark.parametrize("source", ["focus sample", "long csv", "long csv gz"])
def test_a_change_of_line_break_is_named_with_its_line(warehouse, samples, tmp_path, source, first):
    """DuckDB's parser keeps the first line break it sees; where the file changes it, DuckDB says
    'invalid state' or blames a quote. The Error names the change and its line instead."""
    import gzip
    if source == "focus sample":
        lines = (samples / "billing" / "focus-1.0__focus-sample-data__focus_sample.csv").read_bytes().splitlines()
        at = 600
    else:
        lines = [b"timestamp,__name__,Hostname,UUID,gpu,modelName,namespace,pod,value"] + [
            f"2026-10-06T00:{i // 60 % 60:02d}:{i % 60:02d}Z,DCGM_FI_DEV_POWER_USAGE,node-a,GPU-1,0,NVIDIA H100,ns,pod-0,{200 + i}".encode()
            for i in range(3000)]
        at = 2700
    data = mixed_breaks(lines, at, first)
    path = tmp_path / ("mixed.csv.gz" if source.endswith("gz") else "mixed.csv")
    path.write_bytes(gzip.compress(data) if source.endswith("gz") else data)
    ingest_json(warehouse, DATA / "focus" / "focus_1.2_minimal.csv")
    before = table_state(warehouse)
    code, _, err = run_cli("ingest", str(path), "--warehouse", str(warehouse))
    was, now = ("LF", "CRLF") if first == b"\n" else ("CRLF", "LF")
    assert code == 1 and "Traceback" not in err
    assert err.strip() == (f"Error: {path}: line breaks change from {was} to {now} (line {at + 1}). "
                           "Convert the file to one kind of line break (dos2unix, say) and ingest it again")
    assert table_state(warehouse) == before
