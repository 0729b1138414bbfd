"""FOCUS 1.3 and 1.4: the version told from the columns, the provider from ServiceProviderName,
provider-allocated rows counted once whether the file has their origin charge or not, the
allocation and ContractApplied kept, the Contract Commitment dataset feeding commitment_unused
and the 1.4 Invoice Detail dataset reconciling with the month (fixtures: tests/data/focus/README.md)."""
from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from tests.conftest import DATA, ingest_json

FOCUS = DATA / "focus"
ORIGIN_AND_ALLOCATED = FOCUS / "focus_1.3_origin_and_allocated.csv"   # 796.48 USD billed, origin row 1
ORIGIN_BILLED = Decimal("786.48")


def query(wh: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute(sql).fetchall()


def rewrite(src: Path, out: Path, keep_row=lambda i, row: True, drop_columns: tuple[str, ...] = ()) -> Path:
    """A copy of a fixture with some data rows (1-based) or columns left out."""
    with src.open(newline="") as f:
        rows = list(csv.DictReader(f))
    names = [c for c in rows[0] if c not in drop_columns]
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, names, extrasaction="ignore")
        w.writeheader()
        w.writerows(r for i, r in enumerate(rows, 1) if keep_row(i, r))
    return out


def billed(wh: Path, file_id: int = 1) -> Decimal:
    return query(wh, f"select sum(billed_cost) from charges where file_id = {file_id}")[0][0]


def test_origin_charge_with_its_allocated_rows_counts_once(tmp_path):
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, ORIGIN_AND_ALLOCATED)["files"]
    assert (f["kind"], f["format_version"], f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == ("focus", "1.3", 5, 5, 0)
    assert billed(wh) == ORIGIN_BILLED + Decimal("10.00")
    assert f["totals"]["gpu_hours"] == pytest.approx(24 * 8)     # one p4d.24xlarge day, not two
    assert query(wh, "select row_number, billed_cost, allocated_rows, allocated_billed_cost from focus_origin_charges") == [
        (1, ORIGIN_BILLED, 3, ORIGIN_BILLED)]
    assert query(wh, "select distinct provider from charges") == [("Amazon Web Services",)]


def test_allocated_rows_alone_count_as_the_origin_charge(tmp_path):
    wh = tmp_path / "wh.duckdb"
    only = rewrite(ORIGIN_AND_ALLOCATED, tmp_path / "allocated_only.csv", keep_row=lambda i, r: i != 1)
    (f,) = ingest_json(wh, only)["files"]
    assert (f["format_version"], f["rows_read"], f["rows_loaded"]) == ("1.3", 4, 4)
    assert billed(wh) == ORIGIN_BILLED + Decimal("10.00")
    assert query(wh, "select count(*) from focus_origin_charges") == [(0,)]


def test_allocation_is_kept_for_a_provider_split(tmp_path):
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, ORIGIN_AND_ALLOCATED)
    assert query(wh, """select row_number, allocated_method_id, allocated_resource_id, allocated_ratio,
                               allocated_usage_quantity, allocated_usage_unit, allocated_tags['team']
                        from focus_allocations order by 1""") == [
        (2, "eks-split-cost-allocation", "pod/llm-pretrain-0", 0.5, 96.0, "GPU Hours", "research"),
        (3, "eks-split-cost-allocation", "pod/embed-batch-1", 0.3, 57.6, "GPU Hours", "search"),
        (4, "eks-split-cost-allocation", None, 0.2, 38.4, "GPU Hours", None)]
    assert query(wh, "select row_number, contract_id, contract_commitment_id, applied_cost from charge_contracts") == [
        (5, "C-1", "CC-SPEND-1", Decimal("2"))]


def test_focus_1_4_origin_and_allocated_parquet(tmp_path):
    # 1.4 drops ProviderName and PublisherName; the same rows as Parquet
    csv_14 = rewrite(ORIGIN_AND_ALLOCATED, tmp_path / "f14.csv", drop_columns=("ProviderName", "PublisherName"))
    parquet = tmp_path / "f14.parquet"
    with duckdb.connect() as con:
        con.execute(f"copy (select * from read_csv('{csv_14}', all_varchar = true)) to '{parquet}' (format parquet)")
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, parquet)["files"]
    assert (f["kind"], f["format_version"], f["rows_read"], f["rows_loaded"]) == ("focus", "1.4", 5, 5)
    assert billed(wh) == ORIGIN_BILLED + Decimal("10.00")
    assert query(wh, "select count(*) from focus_origin_charges") == [(1,)]


@pytest.mark.parametrize("name, version", [("focus_1.3_provider_allocated_only.csv", "1.3"),
                                           ("focus_1.4_provider_allocated_only.csv", "1.4")])
def test_generated_files_read_with_their_version_and_provider_allocation(tmp_path, name, version):
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, FOCUS / name)["files"]
    assert (f["format_version"], f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (version, 12, 12, 0)
    assert f["totals"]["provider_allocated_rows"] == 6
    # each split host's allocated rows add up to one whole host (ratios sum to 1)
    assert query(wh, """select count(*), bool_and(abs(r - 1) < 1e-4) from (
                            select c.resource_id, sum(a.allocated_ratio) as r from focus_allocations a
                            join charges c using (file_id, row_number) group by 1)""") == [(2, True)]
    assert query(wh, "select count(*) > 0 from charge_contracts where contract_commitment_id is not null") == [(True,)]


def test_contract_commitment_feeds_commitment_unused(tmp_path):
    wh = tmp_path / "wh.duckdb"
    files = ingest_json(wh, ORIGIN_AND_ALLOCATED, FOCUS / "focus_1.3_contract_commitment_underused.csv")["files"]
    assert [(f["kind"], f["format_version"], f["rows_loaded"]) for f in files] == [
        ("focus", "1.3", 5), ("focus_commitments", "1.3", 2)]
    res = CliRunner().invoke(main, ["build", "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    found = query(wh, """select subject, round(value, 6), unit, round(cost_usd, 2) from findings_month
                         where finding = 'commitment_unused' order by 1""")
    # May 2026 is 31/365 of each year-long commitment: 310 USD of spend (2 drawn), 744 of 8760 hours (none drawn)
    assert found == [("CC-GPU-HOURS", 0.0, "fraction", 7440.0), ("CC-SPEND-1", round(2 / 310, 6), "fraction", 308.0)]


def test_generated_contract_commitment_files_are_read(tmp_path):
    wh = tmp_path / "wh.duckdb"
    files = ingest_json(wh, FOCUS / "focus_1.3_contract_commitment.csv")["files"]
    assert [(f["kind"], f["format_version"], f["rows_loaded"]) for f in files] == [("focus_commitments", "1.3", 3)]
    wh14 = tmp_path / "wh14.duckdb"
    files = ingest_json(wh14, FOCUS / "focus_1.4_contract_commitment.csv")["files"]
    assert [(f["kind"], f["format_version"], f["rows_loaded"]) for f in files] == [("focus_commitments", "1.4", 3)]


def test_focus_1_4_invoice_detail_reconciles_with_the_month(tmp_path):
    wh = tmp_path / "wh.duckdb"
    files = ingest_json(wh, FOCUS / "focus_1.4_provider_allocated_only.csv", FOCUS / "focus_1.4_invoice_detail.csv")["files"]
    assert [(f["kind"], f["format_version"], f["rows_read"], f["rows_loaded"]) for f in files] == [
        ("focus", "1.4", 12, 12), ("focus_invoices", "1.4", 3, 3)]
    assert files[1]["totals"]["invoices"] == 2
    res = CliRunner().invoke(main, ["build", "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    rows = query(wh, "select invoice_id, basis, difference, status from reconciliation order by 1")
    assert rows == [("INV-2026-05-0001", "invoice", Decimal(0), "reconciled"),
                    ("INV-2026-05-0002", "invoice", Decimal(0), "reconciled")]


def test_invoice_detail_with_a_bad_part_rejects_the_whole_invoice(tmp_path):
    bad = tmp_path / "invoice_detail_bad_part.csv"
    text = (FOCUS / "focus_1.4_invoice_detail.csv").read_text().splitlines()
    text[2] = "12..5" + text[2][text[2].index(","):]     # row 2: INV-2026-05-0001's Usage part
    bad.write_text("\n".join(text) + "\n")
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, bad)["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (3, 1, 2)
    assert query(wh, "select invoice_id from invoices") == [("INV-2026-05-0002",)]
    assert query(wh, "select row_number, check_name from rejects order by 1, 2") == [
        (1, "invoice_part_rejected"), (2, "parses_as_decimal")]


def test_provider_split_gives_allocated_rows_the_team_of_their_allocated_tags(tmp_path):
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, ORIGIN_AND_ALLOCATED)
    res = CliRunner().invoke(main, ["build", "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    assert query(wh, "select row_number, team, team_source from int_charges_teams order by 1") == [
        (2, "research", "provider_split:team"), (3, "search", "provider_split:team"),
        (4, "unallocated", "none"), (5, "unallocated", "none")]
    assert query(wh, "select sum(billed_cost) from team_month") == [(ORIGIN_BILLED + Decimal("10.00"),)]
