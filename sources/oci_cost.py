"""Oracle Cloud Infrastructure cost reports (CSV): seen beside AWS and Azure in FOCUS data."""
from __future__ import annotations

from typing import Any

import duckdb

from sources.aws_cur import tags_map_sql
from sources.base import Head, Staged, register
from sources.billing import BillingReader
from sources.tabular import canonical_view, stage_sql

ALIASES: dict[str, tuple[str, ...]] = {
    "tenant_id": ("lineItem/tenantId",),
    "compartment_id": ("product/compartmentId",),
    "interval_start": ("lineItem/intervalUsageStart",),
    "interval_end": ("lineItem/intervalUsageEnd",),
    "is_correction": ("lineItem/isCorrection",),
    "description": ("product/Description",),
    "service": ("product/service",),
    "product_sku": ("cost/productSku",),
    "resource_id": ("product/resourceId",),
    "region": ("product/region",),
    "subscription_id": ("cost/subscriptionId",),
    "billed_quantity": ("usage/billedQuantity",),
    "unit": ("cost/skuUnitDescription",),
    "my_cost": ("cost/myCost",),
    "currency": ("cost/currencyCode",),
}
REQUIRED = {"interval_start", "my_cost", "currency"}


@register
class OciCostReader(BillingReader):
    kind = "oci-cost"
    description = "Oracle Cloud Infrastructure cost report"
    aliases = ALIASES
    line_columns = {"billed_cost": ("my_cost",), "effective_cost": ("my_cost",), "consumed_quantity": ("billed_quantity",),
                    "consumed_unit": ("unit",), "charge_period_end": ("interval_end",)}

    def sniff(self, head: Head) -> str | None:
        return "cost-report" if {"lineItem/intervalUsageStart", "cost/myCost"} <= set(head.columns) else None

    def stage_rows(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any], padded: bool) -> Staged:
        tag_cols = canonical_view(con, head, ALIASES, REQUIRED, "raw_oci", extra_prefixes=("tags/",), numbered=False, padded=padded)
        rows_read = stage_sql(con, head.path, "stg_oci_cost__charges.sql", {"tags": tags_map_sql(tag_cols, lambda c: c.split("/", 1)[1])},
                               rowid_numbers=True)
        return self.finish(con, head, rows_read, "cost-report")
