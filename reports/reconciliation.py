"""What page 1 says about the reconciliation mart: to which invoices the month's figures were
reconciled, or that no invoice was loaded and the exports were only summed.

A chargeback says "reconciled to invoice X" only when invoice X was loaded and every line of it
is allocated to the cent; export lines no loaded invoice covers are said to equal the loaded
exports, which is all they can be compared with.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any


def reconciliation_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """rows: the month's reconciliation mart rows. An owned cluster's cost pool (basis 'cost
    pool') is a reference like an invoice: page 1 names it, and says so when its lines differ."""
    invoices = [r for r in rows if r["basis"] in ("invoice", "cost pool")]
    exports = [r for r in rows if r["basis"] == "loaded exports"]
    differing = [r for r in invoices if r["status"] != "reconciled"]
    billed = [r["invoice_id"] for r in invoices if r["basis"] == "invoice"]
    pools = [r["invoice_id"] for r in invoices if r["basis"] == "cost pool"]
    return {
        "invoice_ids": [r["invoice_id"] for r in invoices],
        "pools_only": bool(pools) and not billed,
        # "invoices A, B and cost pool lab 2026-10": what the figures were reconciled to
        "references": " and ".join(x for x in (
            f"invoice{'s' if len(billed) > 1 else ''} {', '.join(billed)}" if billed else "",
            ", ".join(pools)) if x),
        "invoices_reconciled": bool(invoices) and not differing,
        "differing": differing,
        "invoiced_amount": sum((Decimal(r["invoice_amount"]) for r in invoices), Decimal(0)),
        "invoice_difference": sum((Decimal(r["difference"]) for r in invoices), Decimal(0)),
        "uninvoiced_lines": sum(r["lines"] for r in exports),
        "uninvoiced_billed_cost": sum((Decimal(r["export_billed_cost"]) for r in exports), Decimal(0)),
        "exports_reconciled": all(r["status"] == "reconciled" for r in exports),
        "exports_difference": sum((Decimal(r["difference"]) for r in exports), Decimal(0)),
        "export_billed_cost": sum((Decimal(r["export_billed_cost"]) for r in rows), Decimal(0)),
        "allocated_billed_cost": sum((Decimal(r["allocated_billed_cost"]) for r in rows), Decimal(0)),
        "lines": sum(r["lines"] for r in rows),
    }
