"""The FOCUS Contract Commitment dataset (1.3 supplemental, 1.4 one of the four datasets): one row
per commitment a contract holds (spend or usage, its cost or quantity over its period). The
commitment findings compare it with what the charges drew on it (ContractApplied,
charge_contracts): int_commitment_findings."""
from __future__ import annotations

from typing import Any

import duckdb

from schemas.contract import reject_sql
from sources.base import Head, Reader, Staged, register
from sources.tabular import canonical_view, stage_sql

ALIASES: dict[str, tuple[str, ...]] = {c: (c,) for c in (
    "ContractCommitmentId", "ContractCommitmentType", "ContractCommitmentCategory", "ContractCommitmentCost",
    "ContractCommitmentQuantity", "ContractCommitmentUnit", "ContractCommitmentDescription",
    "ContractCommitmentPeriodStart", "ContractCommitmentPeriodEnd", "ContractId", "BillingCurrency")}
REQUIRED = {"ContractCommitmentId", "ContractCommitmentCategory", "ContractCommitmentPeriodStart",
            "ContractCommitmentPeriodEnd"}
# Columns the 1.4 dataset adds to the 13 of 1.3
FOCUS_14_MARKS = frozenset(("ContractCommitmentLifecycleStatus", "ContractCommitmentModel", "ServiceProviderName"))


@register
class FocusCommitmentsReader(Reader):
    kind = "focus_commitments"
    table = "contract_commitments"
    description = "FinOps FOCUS Contract Commitment dataset (1.3, 1.4)"

    def sniff(self, head: Head) -> str | None:
        cols = set(head.columns)
        if not {"ContractCommitmentId", "ContractCommitmentCategory"} <= cols:
            return None
        return "1.4" if cols & FOCUS_14_MARKS else "1.3"

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        canonical_view(con, head, ALIASES, REQUIRED, "raw_commitments")
        rows_read = stage_sql(con, head.path, "stg_focus__contract_commitments.sql")
        from schemas.contract_commitments import ContractCommitments  # pandera: imported when a file is staged
        sql = reject_sql(ContractCommitments, {r[0] for r in con.execute("describe _staged").fetchall()})
        if sql:
            con.execute(sql)
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or "1.3")

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        rows = con.execute("""select contract_commitment_category, count(*), sum(contract_commitment_cost)
                              from contract_commitments where file_id = ? group by all order by 1""", [file_id]).fetchall()
        return {"commitments": {cat: {"rows": n, "cost": float(c or 0)} for cat, n, c in rows}}
