"""Reconciling to real invoices: the exports' invoice ids are read, an invoices file is ingested
like any input, and page 1 says "reconciled to invoice X" only when invoice X was loaded and
matches - an invoice 12.34 above its export shows the difference and a finding."""
from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from pipelines.cli import main
from tests.conftest import DATA, ingest_json

INVOICES = DATA / "invoices"
FOCUS = DATA / "focus" / "focus_1.2_minimal.csv"     # three lines on invoice INV-1, 94.326 USD


def one_line(text: str) -> str:
    return " ".join(text.split())


def query(wh: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_invoices_file_is_detected_loaded_with_lineage_and_its_bad_rows_rejected(tmp_path):
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, INVOICES / "invoices_bad_rows.csv")["files"]
    assert (f["kind"], f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == ("invoices", 8, 2, 6)
    assert query(wh, "select row_number, invoice_id, period, amount, currency from invoices order by 1") == [
        (1, "INV-7", "2026-09", Decimal("1200"), "USD"), (8, "INV-12", "2026-10", Decimal("-20"), "USD")]
    rejected = query(wh, "select row_number, column_name, check_name from rejects order by 1, 2, 3")
    assert {(r, c, k) for r, c, k in rejected} >= {
        (2, "amount", "parses_as_decimal"), (3, "period", "parses_as_month"), (4, "currency", "str_matches(^[A-Z]{3}$)"),
        (5, "invoice_id", "unique_invoice_id"), (6, "invoice_id", "unique_invoice_id"), (7, "invoice_id", "not_nullable")}


def test_invoices_file_without_a_column_stops_with_one_line(tmp_path):
    wh = tmp_path / "wh.duckdb"
    res = CliRunner().invoke(main, ["ingest", str(INVOICES / "invoices_missing_issuer_column.csv"), "--warehouse", str(wh)])
    assert res.exit_code == 1
    assert res.output.strip().endswith("invoices_missing_issuer_column.csv: missing required column issuer (header). "
                                       "Export with all mandatory columns, or pass the right --kind")


def test_exports_carry_their_invoice_ids_into_charges(tmp_path):
    """FOCUS InvoiceId, Azure InvoiceId (MCA exports; appended to an EA export here) and GCP's
    billing account with its invoice month, since Google's export names no invoice number."""
    azure = tmp_path / "azure_with_invoice_id.csv"
    with open(DATA / "azure" / "azure_ea_amortized_reservation_gpu.csv", encoding="utf-8-sig", newline="") as src:
        rows = list(csv.reader(src))
    with open(azure, "w", encoding="utf-8", newline="") as dst:
        csv.writer(dst).writerows([rows[0] + ["InvoiceId"]] + [r + ["G012345678"] for r in rows[1:]])
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, FOCUS, azure, DATA / "gcp" / "gcp_standard_export_dotted_columns.csv")
    got = query(wh, "select provider, invoice_id, count(*) from charges group by all order by all")
    assert [(p, i) for p, i, _ in got] == [("AWS", "INV-1"), ("Google Cloud", "01A2B3-C4D5E6-F7A8B9/202610"),
                                           ("Microsoft", "G012345678")]


def test_an_empty_cur_invoice_id_stays_null(samples, tmp_path):
    """A CUR for a month not yet invoiced writes bill/InvoiceId empty (the real sample does)."""
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, samples / "billing" / "aws-cur-legacy__focus-converters__sample-anonymous-aws-export-dataset.csv")
    assert query(wh, "select count(*), count(invoice_id) from charges")[0][1] == 0


@pytest.fixture(scope="module")
def reconciled(tmp_path_factory) -> dict:
    """The export alone, reported; then INV-1 loaded as invoiced (94.33 for 94.326 of lines),
    reported; then the same invoice typed 12.34 higher in a later file, reported again."""
    root = tmp_path_factory.mktemp("invoices")
    wh = root / "wh.duckdb"
    out = {}
    for name, invoices in (("none", None), ("match", "invoices_matching_focus_minimal.csv"),
                           ("differs", "invoices_12.34_more_than_the_export.csv")):
        ingest_json(wh, FOCUS, *([INVOICES / invoices] if invoices else []))
        res = CliRunner().invoke(main, ["report", "chargeback", "--month", "2026-10", "--warehouse", str(wh),
                                        "--out", str(root / name)])
        assert res.exit_code == 0, res.output
        pdf = PdfReader(root / name / "chargeback.pdf")
        out[name] = {"page1": one_line(pdf.pages[0].extract_text()), "all": one_line("\n".join(p.extract_text() for p in pdf.pages)),
                     "mart": query(wh, """select invoice_id, basis, invoice_amount, lines, export_billed_cost,
                                                 allocated_billed_cost, difference, status from reconciliation"""),
                     "findings": query(wh, "select subject, value, unit, detail from findings_month where finding = 'invoice_difference'"),
                     "provenance": json.loads(pdf.attachments["provenance.json"][0])}
    return out


def test_an_invoice_that_matches_its_export_lines_is_reconciled_to_by_name(reconciled):
    r = reconciled["match"]
    assert r["mart"] == [("INV-1", "invoice", Decimal("94.33"), 3, Decimal("94.326"), Decimal("94.326"), Decimal("-0.004"),
                          "reconciled")]
    assert "reconciled to invoice INV-1" in r["page1"]
    assert "reconciled to the invoice" in r["page1"] and "no invoice loaded" not in r["page1"]
    assert r["findings"] == []


def test_an_invoice_12_34_above_its_export_shows_the_difference_and_a_finding(reconciled):
    r = reconciled["differs"]
    ((invoice, basis, amount, lines, exported, allocated, difference, status),) = r["mart"]
    assert (invoice, basis, amount, lines, status) == ("INV-1", "invoice", Decimal("106.67"), 3, "differs")
    assert exported == allocated == Decimal("94.326")
    assert difference.quantize(Decimal("0.01")) == Decimal("-12.34")
    assert "differs from invoice INV-1 by −12.34" in r["page1"]
    assert "reconciled" not in r["page1"]
    ((subject, value, unit, detail),) = r["findings"]
    assert (subject, round(value, 2), unit) == ("INV-1", -12.34, "USD")
    assert "106.67 invoiced, 94.33 in 3 export lines" in detail
    # the finding leads page 1's top findings, and the reconciliation table shows both sides
    assert r["page1"].index("differs from invoice INV-1") < r["page1"].index("Per team")
    assert "Invoice does not reconcile" in r["page1"]
    assert "INV-1 Amazon Web Services, Inc. invoice 3 94.33 106.67 94.33 −12.34 differs" in r["all"]
    # the invoice loaded again counts once: the later file's amount
    assert r["provenance"]["source_files"][-1]["kind"] == "invoices"


def test_without_an_invoice_the_report_claims_only_the_exports(reconciled):
    r = reconciled["none"]
    assert "totals equal the loaded exports (no invoice loaded)" in r["page1"]
    assert "reconciled to" not in r["page1"]
    assert r["mart"] == [("INV-1", "loaded exports", None, 3, Decimal("94.326"), Decimal("94.326"), Decimal("0"), "reconciled")]


def test_an_invoice_without_its_id_in_the_export_is_matched_by_account_and_period(tmp_path):
    """Google's export has no invoice number: an invoice typed with it is matched by billing
    account, period and currency, when it is the only one there."""
    inv = tmp_path / "google.csv"
    inv.write_text("invoice_id,issuer,billing_account_id,period,amount,currency\n"
                   "5012345678,Google LLC,01A2B3-C4D5E6-F7A8B9,2026-10,9.99,USD\n", encoding="utf-8")
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, DATA / "gcp" / "gcp_standard_export_dotted_columns.csv", inv)
    from pipelines.config import load_config
    from pipelines.stages import run_stages
    from pipelines.warehouse import connect
    with connect(wh, create=False) as con:
        run_stages(con, load_config(None))
        rows = con.execute("select invoice_id, basis, lines, export_billed_cost from reconciliation").fetchall()
        exported = con.execute("select count(*), sum(billed_cost) from charges").fetchone()
    assert rows == [("5012345678", "invoice", *exported)]
