"""Billing files that real tools wrote oddly still reconcile (issue 15): the dialect is stated,
short rows are read padded and noted, a side field that does not parse leaves the row's cost in,
and Python literals (koku's GCP labels and credits) are read as JSON. Fixtures are named for
their defect, in the real export layouts."""
from __future__ import annotations

import json
import math

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.warehouse import add_macros
from tests.conftest import DATA, ingest_json


def rows_of(warehouse, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def test_comment_marker_ending_every_row_is_data(warehouse):
    """koku's November CUR: ` # notsecret` ends every row; a sniffer once took it for a comment."""
    (f,) = ingest_json(warehouse, DATA / "aws_cur" / "cur_comment_marker_ending_every_row.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"]) == (4, 4)
    assert f["totals"]["billed_cost"] == pytest.approx(32.7726 + 1.006 + 0.2875 + 3.41)
    assert rows_of(warehouse, "select tags['team'] from charges where row_number = 2") == [("research # notsecret",)]
    # a quoted description keeps its comma and doubled quotes
    assert rows_of(warehouse, "select charge_description from charges where row_number = 1")[0][0].endswith(', "reserved" no')


def test_header_one_field_longer_than_rows_loads_every_row_noted(warehouse):
    """koku's test_cur: 131 header names over 130-field rows; once a raw Binder Error."""
    (f,) = ingest_json(warehouse, DATA / "aws_cur" / "cur_header_one_field_longer_than_rows.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (4, 4, 0)
    assert f["totals"]["billed_cost"] == pytest.approx(37.4761)
    assert f["totals"]["findings"] == {"short_row": 4}
    assert rows_of(warehouse, "select row_number, value from row_findings order by 1") == [(n, "19 fields") for n in (1, 2, 3, 4)]


def test_ragged_rows_short_one_loads_misaligned_one_is_a_located_reject(warehouse):
    (f,) = ingest_json(warehouse, DATA / "aws_cur" / "cur_ragged_rows_and_blank_trailing_lines.csv")["files"]
    # two blank lines end the file: not rows
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (5, 4, 1)
    assert rows_of(warehouse, "select row_number, check_name, value from row_findings order by 1") == [(2, "short_row", "16 fields")]
    assert f["totals"]["findings"] == {"short_row": 1}
    # the row that lost two middle fields has its usage type where the cost belongs
    checks = rows_of(warehouse, "select distinct row_number, column_name, check_name from rejects "
                                "where check_name like 'parses%' order by 2")
    assert checks == [(3, "lineItem/UnblendedCost", "parses_as_decimal"), (3, "lineItem/UsageEndDate", "parses_as_timestamp")]
    assert f["totals"]["billed_cost"] == pytest.approx(32.7726 + 1.006 + 0.2875 + 3.41)


@pytest.mark.parametrize("name", ["azure_usage_details_legacy_pretaxcost.csv", "azure_usage_details_legacy_camelcase.csv"])
def test_legacy_azure_usage_details_load_as_usage(warehouse, name):
    (f,) = ingest_json(warehouse, DATA / "azure" / name)["files"]
    assert f["kind"] == "azure-cost" and f["format_version"] == "usage-details-legacy"
    assert (f["rows_read"], f["rows_loaded"]) == (3, 3)
    assert f["totals"]["billed_cost"] == pytest.approx(88.152 + 4.5012 + 1.0875)
    assert any("every row read as Usage" in n for n in f["notes"])
    # tags without braces are wrapped; a Tags cell that is no JSON at all leaves the cost in
    assert rows_of(warehouse, "select row_number, tags['team'] from charges order by 1") == [(1, "research"), (2, "research"), (3, None)]
    assert f["totals"]["findings"] == {"tags_not_parsed": 1}
    assert rows_of(warehouse, "select row_number, column_name, value from row_findings") == [(3, "Tags", "team=research;env=prod")]


def test_legacy_azure_gpu_vm_hours_from_additional_info(warehouse):
    (f,) = ingest_json(warehouse, DATA / "azure" / "azure_usage_details_legacy_pretaxcost.csv")["files"]
    assert f["totals"]["gpu_hours"] == pytest.approx(24.0)       # NC24ads A100 v4: 1 GPU x 24 h


def test_gcp_python_literal_labels_and_credits_are_read(warehouse):
    (f,) = ingest_json(warehouse, DATA / "gcp" / "gcp_labels_and_credits_as_python_literals.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (3, 3, 0)
    assert f["totals"]["billed_cost"] == pytest.approx(11.73 + 0.052 - 4.1 - 0.63 - 0.000005)
    tags = rows_of(warehouse, "select tags from charges where row_number = 1 and charge_line = 0")[0][0]
    assert tags == {"team": "research", "owner": "o'brien"}
    credits = rows_of(warehouse, "select charge_line, charge_description, billed_cost from charges "
                                 "where charge_category = 'Credit' order by row_number, charge_line")
    assert [(c[0], c[1], float(c[2])) for c in credits] == [
        (1, "CUD", -4.1), (2, "Free trial credit", -0.63), (1, "FreeTrial:Credit-01A2B3", -0.000005)]


def test_gcp_labels_that_do_not_parse_keep_the_cost(warehouse):
    """47 % of koku's tmp_example cost once left with its Python-literal labels; money stays."""
    (f,) = ingest_json(warehouse, DATA / "gcp" / "gcp_labels_unparseable_cost_kept.csv")["files"]
    assert (f["rows_loaded"], f["rows_rejected"]) == (3, 0)
    assert f["totals"]["billed_cost"] == pytest.approx(11.73 + 0.052 - 4.1 - 0.63 - 0.000005)
    assert f["totals"]["findings"] == {"labels_not_parsed": 2}
    assert rows_of(warehouse, "select row_number, column_name, check_name from row_findings order by 1") == [
        (1, "labels", "labels_not_parsed"), (3, "labels", "labels_not_parsed")]
    # rows 1 and 3 with their credit lines (2 + 1): loaded, untagged
    assert rows_of(warehouse, "select count(*) from charges where row_number in (1, 3) and tags is null") == [(5,)]


def test_oci_zero_cost_rows_with_blank_currency_take_the_files(warehouse):
    (f,) = ingest_json(warehouse, DATA / "oci" / "oci_zero_cost_rows_blank_currency.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (4, 4, 0)
    assert f["totals"]["currency"] == "GBP" and f["totals"]["billed_cost"] == pytest.approx(6.1)
    assert rows_of(warehouse, "select row_number, value from row_findings where check_name = 'currency_from_file' order by 1") == [
        (3, "GBP"), (4, "GBP")]


def test_blank_currency_in_a_two_currency_file_is_a_located_reject(warehouse, tmp_path):
    src = (DATA / "oci" / "oci_zero_cost_rows_blank_currency.csv").read_text().splitlines()
    src[2] = src[2].replace(",GBP,", ",EUR,")
    path = tmp_path / "oci_two_currencies_one_blank.csv"
    path.write_text("\n".join(src) + "\n")
    (f,) = ingest_json(warehouse, path)["files"]
    assert (f["rows_loaded"], f["rows_rejected"]) == (2, 2)
    assert rows_of(warehouse, "select distinct row_number, check_name from rejects order by 1") == [
        (3, "not_nullable"), (4, "not_nullable")]


# --- Python literals as JSON, in SQL (pipelines/sql/00_warehouse/macros.sql) ------------------
# Up to U+FFFF: repr escapes an unprintable astral character as \UXXXXXXXX, which JSON has no
# spelling for (such a cell parses to null and is a located finding, not a wrong value).
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), max_codepoint=0xFFFF), max_size=12)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=False, allow_infinity=False), TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    TEXT, inner, max_size=3), max_leaves=8)


@pytest.fixture(scope="module")
def macros():
    con = duckdb.connect()
    add_macros(con)
    yield con
    con.close()


@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_python_literal_becomes_the_same_json(macros, value):
    got = macros.execute("select json_text(?)", [repr(value)]).fetchone()[0]
    if isinstance(value, (list, dict)):
        assert got is not None, repr(value)
        assert same(json.loads(got), value)
    # JSON text passes through untouched
    text = json.dumps(value)
    assert macros.execute("select json_text(?)", [text]).fetchone()[0] == text


def same(a, b) -> bool:
    """Equal as data; floats to their repr's precision (Python prints the shortest round trip)."""
    if isinstance(b, float):
        return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=1e-15, abs_tol=0)
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in b)
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("text", ["['abc", "[{'a': 1}", "team:research", "{'a' 1}", "[1, 2) "])
def test_what_is_no_python_literal_is_null(macros, text):
    assert macros.execute("select json_text(?)", [text]).fetchone()[0] is None


def test_cr_only_line_endings_load_every_row(warehouse, tmp_path):
    """Excel's 'CSV (Macintosh)' ends lines with CR alone: the count and DuckDB agree on rows."""
    path = tmp_path / "cur_cr_line_endings.csv"
    path.write_bytes((DATA / "aws_cur" / "cur_comment_marker_ending_every_row.csv").read_bytes().replace(b"\n", b"\r"))
    (f,) = ingest_json(warehouse, path)["files"]
    assert (f["rows_read"], f["rows_loaded"]) == (4, 4)
