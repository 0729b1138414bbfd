"""Google Cloud Billing export, standard and detailed (JSON lines / Parquet from BigQuery, or
CSV with dotted column names)."""
from __future__ import annotations

from typing import Any

import duckdb

from sources.base import Head, Staged, register
from sources.billing import BillingReader
from sources.tabular import canonical_view, stage_sql

ALIASES: dict[str, tuple[str, ...]] = {
    "billing_account_id": ("billing_account_id",),
    "service_description": ("service.description", "service_description"),
    "sku_id": ("sku.id", "sku_id"),
    "sku_description": ("sku.description", "sku_description"),
    "usage_start": ("usage_start_time",),
    "usage_end": ("usage_end_time",),
    "project_id": ("project.id", "project_id"),
    "labels": ("labels",),
    "region": ("location.region", "location_region"),
    "location": ("location.location", "location_location"),
    "cost": ("cost",),
    "cost_at_list": ("cost_at_list",),
    "currency": ("currency",),
    "usage_amount": ("usage.amount", "usage_amount"),
    "usage_unit": ("usage.unit", "usage_unit"),
    "amount_in_pricing_units": ("usage.amount_in_pricing_units", "usage_amount_in_pricing_units"),
    "pricing_unit": ("usage.pricing_unit", "usage_pricing_unit"),
    "credits": ("credits",),
    "invoice_month": ("invoice.month", "invoice_month"),
    "cost_type": ("cost_type",),
    "resource_name": ("resource.name", "resource_name"),
}
REQUIRED = {"billing_account_id", "usage_start", "cost", "currency"}


@register
class GcpBillingReader(BillingReader):
    kind = "gcp-billing"
    description = "Google Cloud Billing export (standard or detailed)"
    aliases = ALIASES
    line_columns = {"billed_cost": ("cost",), "effective_cost": ("cost",), "list_cost": ("cost_at_list",), "consumed_quantity": ("usage_amount",),
                    "consumed_unit": ("usage_unit",), "charge_period_end": ("usage_end",)}

    def sniff(self, head: Head) -> str | None:
        cols = set(head.columns)
        if not {"billing_account_id", "usage_start_time", "cost"} <= cols:
            return None
        return "detailed" if {"resource", "resource.name", "resource_name"} & cols else "standard"

    def stage_rows(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any], padded: bool) -> Staged:
        canonical_view(con, head, ALIASES, REQUIRED, "raw_gcp", padded=padded)
        rows_read = stage_sql(con, head.path, "stg_gcp_billing__charges.sql")
        return self.finish(con, head, rows_read, self.sniff(head) or "standard")
