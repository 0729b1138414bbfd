"""Invoices: one row per invoice a cloud issued (invoice id, issuer, billing account, period,
amount, currency), typed from the PDF or exported from the billing console. Reconciliation
compares each with the export lines that carry its id (pipelines/sql/30_marts/reconciliation.sql).

An invoice id loaded again from another file is kept in both (lineage stays whole); the mart
uses the most recently loaded one, and ingest says so.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import one_row
from schemas.contract import reject_sql
from schemas.invoices import Invoices
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
        sql = reject_sql(Invoices, {r[0] for r in con.execute("describe _staged").fetchall()})
        if sql:
            con.execute(sql)
        again = one_row(con, """
            select string_agg(distinct s.invoice_id || ' (file_id ' || i.file_id || ')', ', ' order by 1)
            from _staged s
            join invoices i using (invoice_id)
            join source_files f on f.file_id = i.file_id and f.status = 'loaded' and f.path <> ?""",
            [str(head.path.resolve())])[0]
        notes = [f"invoices loaded before, this file's amounts are used: {again}"] if again else []
        return Staged(rows_read=rows_read, format_version="1", notes=notes)

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        rows = con.execute("select currency, count(*), sum(amount) from invoices where file_id = ? group by all order by 1",
                           [file_id]).fetchall()
        by_cur = {cur: {"invoices": n, "amount": float(a)} for cur, n, a in rows}
        if len(by_cur) == 1:
            (cur, t), = by_cur.items()
            return {**t, "currency": cur}
        return {"invoices": sum(t["invoices"] for t in by_cur.values()), "currency": "mixed" if by_cur else None,
                "by_currency": by_cur}
