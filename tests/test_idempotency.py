"""Re-runs and restatements: whatever the order, grouping or repetition, the warehouse ends with
the totals of one clean load of the files that are current.

Rules under test (pipelines/ingest.py): same sha256 -> `unchanged`; same path, new content ->
the new content replaces the old; same billing kind + accounts + months (delivery key) from
another folder -> a restatement that replaces the earlier delivery; the same key in the same
folder -> parts of one delivery, kept together in any run.
"""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.conftest import DATA, ingest_json
from tests.wh_state import content

FOCUS = DATA / "focus" / "focus_1.2_minimal.csv"
# One file per reader, every delivery key distinct (the two GCP fixtures are one delivery: a folder).
MIXED = [
    FOCUS,
    DATA / "aws_cur2" / "cur2_gpu_instances_map_columns.csv",
    DATA / "azure" / "azure_ea_amortized_reservation_gpu.csv",
    DATA / "gcp",
    DATA / "codecarbon" / "timezone_local_end_time.csv",
    DATA / "disclosures" / "published" / "bloom-176b-dynamic.yaml",
    DATA / "bad" / "cur_duplicate_line_item_ids.csv",
    DATA / "bad" / "dcgm_sentinels_nan_inf.prom",
]


def clean_load(tmp: Path, *paths: Path) -> dict:
    wh = tmp / f"clean-{len(list(tmp.glob('clean-*')))}.duckdb"
    ingest_json(wh, *paths)
    return content(wh)


def restated(tmp: Path, folder: str, billed: str = "90.00") -> Path:
    """The minimal FOCUS month re-delivered (another folder, as clouds do) with one cost changed."""
    d = tmp / folder
    d.mkdir()
    p = d / "focus-2026-10.csv"
    p.write_text(FOCUS.read_text().replace("98.32,111122223333", f"{billed},111122223333", 1))
    return p


def test_same_file_twice_is_unchanged(warehouse, tmp_path):
    first = ingest_json(warehouse, FOCUS)["files"][0]
    again = ingest_json(warehouse, FOCUS, FOCUS)["files"]
    assert [f["status"] for f in again] == ["unchanged", "unchanged"]
    assert again[0]["totals"] == first["totals"] and again[0]["rows_loaded"] == first["rows_loaded"]
    assert content(warehouse) == clean_load(tmp_path, FOCUS)


def test_same_content_under_another_name_is_unchanged(warehouse, tmp_path):
    copy = tmp_path / "copy of focus.csv"
    shutil.copy(FOCUS, copy)
    ingest_json(warehouse, FOCUS)
    (f,) = ingest_json(warehouse, copy)["files"]
    assert f["status"] == "unchanged" and f["notes"] == [f"same content as {FOCUS.resolve()}, already loaded"]
    assert content(warehouse) == clean_load(tmp_path, FOCUS)


def test_changed_file_at_the_same_path_replaces_it(warehouse, tmp_path):
    path = tmp_path / "exports" / "focus.csv"
    path.parent.mkdir()
    shutil.copy(FOCUS, path)
    ingest_json(warehouse, path)
    path.write_text(FOCUS.read_text().replace("1.006,111122223333", "2.50,111122223333", 1))
    (f,) = ingest_json(warehouse, path)["files"]
    assert f["status"] == "loaded" and any("same path, new content" in n for n in f["notes"])
    after = content(warehouse)
    assert after == clean_load(tmp_path, path)
    assert float(after["charges"][0][2]) == pytest.approx(98.32 + 2.50 - 5.00)


def test_restated_month_replaces_the_earlier_delivery_and_is_idempotent(warehouse, tmp_path):
    v2 = restated(tmp_path, "delivery-2")
    ingest_json(warehouse, FOCUS)
    ingest_json(warehouse, v2)
    ingest_json(warehouse, v2)                    # re-run: unchanged
    ingest_json(warehouse, tmp_path)              # the whole tree again: unchanged too
    after = content(warehouse)
    assert after == clean_load(tmp_path, v2)
    assert float(after["charges"][0][2]) == pytest.approx(90.00 + 1.006 - 5.00)


def test_two_deliveries_of_one_month_in_one_run_are_refused_not_double_counted(warehouse, tmp_path):
    v1, v2 = restated(tmp_path, "a-first", "98.32"), restated(tmp_path, "b-second")
    from tests.test_bad_inputs import ingest as cli_ingest
    res = cli_ingest(warehouse, tmp_path, "auto")
    assert res.exit_code == 1
    assert res.stderr.strip() == (f"Error: {v2}: a second delivery of 111122223333@2026-10 in one run (also in {v1.parent}). "
                                  "Ingest one delivery at a time, oldest first: each later one replaces the earlier")
    assert content(warehouse) == clean_load(tmp_path, v1)      # as after the first file: never both


def test_parts_of_one_delivery_never_replace_each_other_in_any_grouping(tmp_path):
    """A CUR/FOCUS month split over files of one folder: one run, one run per part, any order."""
    src = FOCUS.read_text().splitlines()
    folder = tmp_path / "delivery"
    folder.mkdir()
    parts = [folder / "part-1.csv", folder / "part-2.csv"]
    parts[0].write_text("\n".join(src[:2]) + "\n")
    parts[1].write_text("\n".join([src[0]] + src[2:]) + "\n")
    together = clean_load(tmp_path, folder)
    assert together["charges"][0][1] == 3
    for order in itertools.permutations(parts):
        wh = tmp_path / f"split-{order[0].stem}.duckdb"
        for p in order:
            ingest_json(wh, p)
        assert content(wh) == together


def test_ingest_order_does_not_change_the_totals(tmp_path):
    reference = clean_load(tmp_path, *MIXED)
    orders = [MIXED[::-1], MIXED[3:] + MIXED[:3]]
    for i, order in enumerate(orders):
        wh = tmp_path / f"order-{i}.duckdb"
        for p in order:                      # one command per path, in this order
            ingest_json(wh, p)
        assert content(wh) == reference, f"order {i}"
    wh = tmp_path / "twice.duckdb"
    ingest_json(wh, *MIXED)
    ingest_json(wh, *MIXED[::-1])            # everything again, reversed: all unchanged
    assert content(wh) == reference


def test_rejects_of_a_replaced_file_no_longer_count(warehouse, tmp_path):
    path = tmp_path / "focus.csv"
    bad = (DATA / "focus" / "focus_1.2_bad_rows.csv").read_text()
    path.write_text(bad)
    (f,) = ingest_json(warehouse, path)["files"]
    assert f["rows_rejected"] == 2
    shutil.copy(FOCUS, path)
    ingest_json(warehouse, path)
    after = content(warehouse)
    assert after["rejects"] == [] and after == clean_load(tmp_path, path)
    con = duckdb.connect(str(warehouse), read_only=True)
    # the replaced file's rejects stay as history, tied to a file marked replaced
    assert con.execute("select count(*) from rejects join source_files using (file_id) "
                       "where status = 'replaced'").fetchone()[0] > 0
