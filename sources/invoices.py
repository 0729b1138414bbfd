"""Invoices: one row per invoice a cloud issued (invoice id, issuer, billing account, period,
amount, currency), typed from the PDF or exported from the billing console. Reconciliation
compares each with the export lines that carry its id (pipelines/sql/30_marts/reconciliation.sql).

An invoice id loaded again from another file is kept in both (lineage stays whole); the mart
uses the most recently loaded one, and ingest says so.

The FOCUS 1.4 Invoice Detail dataset (kind focus_invoices) is read into the same table: its rows
are an invoice's parts (one per charge category, or finer), kept as written in invoice_details,
and their BilledCost summed per InvoiceId is the invoice's amount.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import one_row
from schemas.contract import reject_sql
from sources.base import Head, Reader, Staged, register
from sources.tabular import canonical_view, stage_sql

COLUMNS = ("invoice_id", "issuer", "billing_account_id", "period", "amount", "currency")
ALIASES: dict[str, tuple[str, ...]] = {c: (c,) for c in COLUMNS}
# The header names what each column means: all six must be there, values may be empty where
# optional (issuer, billing_account_id).
REQUIRED = set(COLUMNS)
SNIFF = {"invoice_id", "period", "amount", "currency"}


@register
class InvoicesReader(Reader):
    kind = "invoices"
    table = "invoices"
    description = "invoices file (CSV: invoice_id, issuer, billing_account_id, period, amount, currency)"

    def sniff(self, head: Head) -> str | None:
        return "1" if SNIFF <= set(head.columns) else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        canonical_view(con, head, ALIASES, REQUIRED, "raw_invoices")
        rows_read = stage_sql(con, head.path, "stg_invoices__invoices.sql")
        from schemas.invoices import Invoices  # pandera and pandas: imported when a file is staged
        sql = reject_sql(Invoices, {r[0] for r in con.execute("describe _staged").fetchall()})
        if sql:
            con.execute(sql)
        return Staged(rows_read=rows_read, format_version="1", notes=loaded_before(con, head))

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        rows = con.execute("select currency, count(*), sum(amount) from invoices where file_id = ? group by all order by 1",
                           [file_id]).fetchall()
        by_cur = {cur: {"invoices": n, "amount": float(a)} for cur, n, a in rows}
        if len(by_cur) == 1:
            (cur, t), = by_cur.items()
            return {**t, "currency": cur}
        return {"invoices": sum(t["invoices"] for t in by_cur.values()), "currency": "mixed" if by_cur else None,
                "by_currency": by_cur}


def loaded_before(con: duckdb.DuckDBPyConnection, head: Head) -> list[str]:
    """The note naming this file's invoice ids that another loaded file has too."""
    again = one_row(con, """
        select string_agg(distinct s.invoice_id || ' (file_id ' || i.file_id || ')', ', ' order by 1)
        from _staged s
        join invoices i using (invoice_id)
        join source_files f on f.file_id = i.file_id and f.status = 'loaded' and f.path <> ?""",
        [str(head.path.resolve())])[0]
    return [f"invoices loaded before, this file's amounts are used: {again}"] if again else []


# FOCUS 1.4 Invoice Detail columns read (the dataset has more: dates, terms, status).
DETAIL_ALIASES: dict[str, tuple[str, ...]] = {c: (c,) for c in (
    "InvoiceId", "InvoiceDetailId", "InvoiceIssuerName", "BillingAccountId", "BillingPeriodStart", "ChargeCategory",
    "BilledCost", "BillingCurrency")}
DETAIL_REQUIRED = {"InvoiceId", "BillingPeriodStart", "BilledCost", "BillingCurrency"}


@register
class FocusInvoicesReader(InvoicesReader):
    kind = "focus_invoices"
    description = "FinOps FOCUS 1.4 Invoice Detail dataset (one row per part of an invoice)"

    def sniff(self, head: Head) -> str | None:
        cols = set(head.columns)
        return "1.4" if {"InvoiceId", "InvoiceDetailId", "BilledCost"} <= cols and "ChargePeriodStart" not in cols else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        canonical_view(con, head, DETAIL_ALIASES, DETAIL_REQUIRED, "raw_invoice_details", nullstr=("", "NULL"))
        rows_read = stage_sql(con, head.path, "stg_focus__invoice_details.sql")
        from schemas.invoices import Invoices  # pandera and pandas: imported when a file is staged
        sql = reject_sql(Invoices, {r[0] for r in con.execute("describe _staged").fetchall()})
        if sql:
            con.execute(sql)
        # an invoice is the sum of its parts: with one part rejected, its other parts are too
        con.execute("""insert into _rejects
                       select s.row_number, 'InvoiceId', 'invoice_part_rejected', s.invoice_id,
                              'another row of this invoice is rejected; its amount would be short'
                       from _staged s
                       where s.invoice_id in (select invoice_id from _staged where row_number in (select row_number from _rejects))
                         and s.row_number not in (select row_number from _rejects)""")
        return Staged(rows_read=rows_read, format_version="1.4", notes=loaded_before(con, head))

    def load(self, con: duckdb.DuckDBPyConnection, file_id: int) -> int:
        kept = "from _staged anti join (select distinct row_number from _rejects) r using (row_number)"
        con.execute(f"""insert into invoice_details
                        select ?, row_number, invoice_id, invoice_detail_id, charge_category, billed_cost, currency {kept}""",
                    [file_id])
        con.execute(f"""insert into invoices
                        select ?, min(row_number), invoice_id, any_value(issuer), any_value(billing_account_id),
                               any_value(period), sum(billed_cost), any_value(currency)
                        {kept} group by invoice_id""", [file_id])
        return one_row(con, "select count(*) from invoice_details where file_id = ?", [file_id])[0]

    def remove(self, con: duckdb.DuckDBPyConnection, file_id: int) -> None:
        super().remove(con, file_id)
        con.execute("delete from invoice_details where file_id = ?", [file_id])
