"""AWS Cost and Usage Report, legacy format (CSV, CSV.gz; slash or Athena snake_case names)."""
from __future__ import annotations

import re
from typing import Any, Callable

import duckdb

from core.sql import ident, literal, read_sql
from sources.base import Head, Staged, register
from sources.billing import BillingReader
from sources.reference_data import assumption
from sources.tabular import canonical_view


def _both(slash: str) -> tuple[str, ...]:
    """A legacy CUR column and its Athena/Parquet spelling (lineItem/UsageAmount -> line_item_usage_amount)."""
    group, name = slash.split("/", 1)
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", group).lower() + "_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return (slash, snake)


ALIASES: dict[str, tuple[str, ...]] = {
    "line_item_id": _both("identity/LineItemId"),
    "time_interval": _both("identity/TimeInterval"),
    "payer_account_id": _both("bill/PayerAccountId"),
    "invoice_id": _both("bill/InvoiceId"),
    "usage_account_id": _both("lineItem/UsageAccountId"),
    "billing_period_start": _both("bill/BillingPeriodStartDate"),
    "usage_start": _both("lineItem/UsageStartDate"),
    "usage_end": _both("lineItem/UsageEndDate"),
    "line_item_type": _both("lineItem/LineItemType"),
    "description": _both("lineItem/LineItemDescription"),
    "product_code": _both("lineItem/ProductCode"),
    "product_name": _both("product/ProductName"),
    "product_family": _both("product/productFamily"),
    "sku": _both("product/sku"),
    "resource_id": _both("lineItem/ResourceId"),
    "instance_type": _both("product/instanceType"),
    "usage_type": _both("lineItem/UsageType"),
    "region_code": _both("product/regionCode"),
    "availability_zone": _both("lineItem/AvailabilityZone"),
    "usage_amount": _both("lineItem/UsageAmount"),
    "pricing_unit": _both("pricing/unit"),
    "unblended_cost": _both("lineItem/UnblendedCost"),
    "net_unblended_cost": _both("lineItem/NetUnblendedCost"),
    "public_on_demand_cost": _both("pricing/publicOnDemandCost"),
    "currency_code": _both("lineItem/CurrencyCode"),
    "savings_plan_arn": _both("savingsPlan/SavingsPlanARN") + ("savings_plan_savings_plan_a_r_n",),
    "sp_effective_cost": _both("savingsPlan/SavingsPlanEffectiveCost"),
    "sp_total_commitment": _both("savingsPlan/TotalCommitmentToDate"),
    "sp_used_commitment": _both("savingsPlan/UsedCommitment"),
    "reservation_arn": _both("reservation/ReservationARN") + ("reservation_reservation_a_r_n",),
    "ri_effective_cost": _both("reservation/EffectiveCost"),
    "ri_unused_upfront": _both("reservation/UnusedAmortizedUpfrontFeeForBillingPeriod"),
    "ri_unused_recurring": _both("reservation/UnusedRecurringFee"),
    # Split cost allocation data (EKS/ECS): a pod's share of its parent instance's cost. The
    # pod rows re-describe the parent line's cost; they never add to the bill (a pod row's own line
    # cost, which AWS does not promise is 0, is not counted: stg_aws_cur__charges.sql).
    "split_parent_resource_id": _both("splitLineItem/ParentResourceId"),
    "split_cost": _both("splitLineItem/SplitCost"),
    "split_unused_cost": _both("splitLineItem/UnusedCost"),
    "split_net_split_cost": _both("splitLineItem/NetSplitCost"),
    "split_net_unused_cost": _both("splitLineItem/NetUnusedCost"),
    "split_usage": _both("splitLineItem/SplitUsage"),
    "split_usage_ratio": _both("splitLineItem/SplitUsageRatio"),
    # CUR 2.0 only: nested maps (product attributes, activated cost-allocation tags)
    "product_json": ("product",),
    "resource_tags_json": ("resource_tags",),
}
REQUIRED = {"line_item_type", "usage_start", "unblended_cost"}
TAG_PREFIXES = ("resourceTags/", "resource_tags_")
# Columns only CUR 2.0 has (AWS Data Exports migration guide): snake_case alone is not enough.
CUR2_MARKERS = {"product", "resource_tags", "cost_category", "discount", "bill_payer_account_name",
                "line_item_usage_account_name"}
# CUR 2.0 keeps activated tags in one map; user tags carry a user_ prefix there.
CUR2_TAGS = ("map_from_entries(list_transform(map_entries(try_cast(json_text(resource_tags_json)::json as map(varchar, varchar))), "
             "lambda e: struct_pack(k := regexp_replace(e.key, '^user_', ''), v := e.value)))")


def tag_key(column: str) -> str:
    """resourceTags/user:team -> team; aws:createdBy keeps its provider prefix (as FOCUS does)."""
    key = column.split("/", 1)[1] if "/" in column else column.removeprefix("resource_tags_")
    return key.removeprefix("user:").removeprefix("user_")


def tags_map_sql(columns: list[str], key_of: Callable[[str], str]) -> str:
    """A MAP expression over one-column-per-tag exports (CUR resourceTags/*, OCI tags/*).

    Keys come from the file's header, so they enter the SQL only as escaped string literals;
    empty cells mean the resource has no such tag and are left out.
    """
    if not columns:
        return "map()::map(varchar, varchar)"
    entries = ", ".join(f"struct_pack(k := {literal(key_of(c))}, v := {ident(c)})" for c in columns)
    return f"map_from_entries(list_filter([{entries}], lambda e: e.v is not null and e.v <> ''))"


def split_checks_sql() -> str:
    """The findings of a file's split cost allocation rows against their parent (over _lines and
    _rejects, in stg_billing__findings' shape), within assumptions.csv split_sum_tolerance_fraction."""
    tolerance = assumption("split_sum_tolerance_fraction")["value"]
    return read_sql("10_staging", "stg_aws_cur__split_checks.sql", tolerance=repr(tolerance))


@register
class AwsCurReader(BillingReader):
    kind = "aws-cur"
    description = "AWS Cost and Usage Report (legacy), CSV or Athena names"
    in_place = True
    aliases = ALIASES
    line_columns = {"billed_cost": ("net_unblended_cost", "unblended_cost"), "effective_cost": ("net_unblended_cost", "unblended_cost"),
                    "list_cost": ("public_on_demand_cost",), "consumed_quantity": ("usage_amount",), "consumed_unit": ("pricing_unit",),
                    "charge_period_end": ("usage_end",)}

    def finish(self, con: duckdb.DuckDBPyConnection, head: Head, rows_read: int, version: str, in_place: bool = False) -> Staged:
        """The billing findings, and those of split cost allocation rows against their parent."""
        staged = super().finish(con, head, rows_read, version, in_place)
        con.execute("insert into _findings " + split_checks_sql())
        return staged

    def sniff(self, head: Head) -> str | None:
        cols = set(head.columns)
        if "lineItem/UnblendedCost" in cols:
            return "legacy-csv"
        if "line_item_unblended_cost" in cols and not CUR2_MARKERS & cols:
            return "legacy-athena"
        return None

    def stage_rows(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any], padded: bool) -> Staged:
        tag_cols = canonical_view(con, head, ALIASES, REQUIRED, "raw_cur", extra_prefixes=TAG_PREFIXES, numbered=False, padded=padded,
                                  parts=self.parts(head, options))
        tags = tags_map_sql(tag_cols, tag_key)
        return self.stage_lines(con, head, "stg_aws_cur__charges.sql", {"tags": tags}, options, self.sniff(head) or "legacy-csv")


@register
class AwsCur2Reader(AwsCurReader):
    kind = "aws-cur2"
    description = "AWS CUR 2.0 (Data Exports), Parquet or CSV with map columns"

    def sniff(self, head: Head) -> str | None:
        cols = set(head.columns)
        if "line_item_unblended_cost" in cols and CUR2_MARKERS & cols:
            return "2.0"
        return None

    def stage_rows(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any], padded: bool) -> Staged:
        canonical_view(con, head, ALIASES, REQUIRED, "raw_cur", numbered=False, padded=padded, parts=self.parts(head, options))
        return self.stage_lines(con, head, "stg_aws_cur__charges.sql", {"tags": CUR2_TAGS}, options, "2.0")
