"""FinOps FOCUS cost and usage exports, 0.5 to 1.4 (CSV, CSV.gz, Parquet).

FOCUS 1.3 names the provider twice (ServiceProviderName, HostProviderName; ProviderName and
PublisherName are deprecated, and gone in 1.4), writes the contract commitments a charge drew on
(ContractApplied) and may split a charge into allocated rows (Allocated* columns): those rows
are charges, their origin charge, when the file has it too, is kept aside (focus_origin_charges)
so its cost counts once.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import one_row
from sources.base import Head, Staged, register
from sources.billing import BillingReader
from sources.tabular import canonical_view, stage_sql

# Canonical (1.2) name -> spellings seen in the wild, newest first.
ALIASES: dict[str, tuple[str, ...]] = {
    "BilledCost": ("BilledCost",),
    "EffectiveCost": ("EffectiveCost", "AmortizedCost"),
    "ListCost": ("ListCost",),
    "BillingAccountId": ("BillingAccountId",),
    "SubAccountId": ("SubAccountId",),
    "BillingCurrency": ("BillingCurrency", "BilledCurrency"),
    "BillingPeriodStart": ("BillingPeriodStart",),
    "ChargePeriodStart": ("ChargePeriodStart",),
    "ChargePeriodEnd": ("ChargePeriodEnd",),
    "ChargeCategory": ("ChargeCategory", "ChargeType"),
    "ChargeClass": ("ChargeClass",),
    "ChargeDescription": ("ChargeDescription",),
    "ProviderName": ("ServiceProviderName", "ProviderName", "Provider"),
    "HostProviderName": ("HostProviderName",),
    "SkuPriceId": ("SkuPriceId",),
    "ServiceName": ("ServiceName",),
    "ServiceCategory": ("ServiceCategory",),
    "SkuId": ("SkuId",),
    "SkuPriceDetails": ("SkuPriceDetails",),
    "ResourceId": ("ResourceId", "ResourceID"),
    "ResourceType": ("ResourceType",),
    "RegionId": ("RegionId", "Region"),
    "PricingCategory": ("PricingCategory",),
    "CommitmentDiscountId": ("CommitmentDiscountId",),
    "ConsumedQuantity": ("ConsumedQuantity", "UsageQuantity"),
    "ConsumedUnit": ("ConsumedUnit", "UsageUnit"),
    "Tags": ("Tags",),
    "x_UsageType": ("x_UsageType",),
    "InvoiceId": ("InvoiceId", "x_InvoiceId"),
    "ContractApplied": ("ContractApplied",),
    "AllocatedMethodId": ("AllocatedMethodId",),
    "AllocatedMethodDetails": ("AllocatedMethodDetails",),
    "AllocatedResourceId": ("AllocatedResourceId",),
    "AllocatedResourceName": ("AllocatedResourceName",),
    "AllocatedTags": ("AllocatedTags",),
}
REQUIRED = {"BilledCost", "ChargePeriodStart", "ChargeCategory", "BillingCurrency"}
# The 57 columns of FOCUS 1.2 (specification/columns at tag v1.2). Those an input has, and its
# x_ columns, are kept as written (charge_source_columns) so `export focus` carries them through.
FOCUS_12 = frozenset((
    "AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName", "BillingAccountType", "BillingCurrency",
    "BillingPeriodEnd", "BillingPeriodStart", "CapacityReservationId", "CapacityReservationStatus", "ChargeCategory",
    "ChargeClass", "ChargeDescription", "ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart",
    "CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName", "CommitmentDiscountQuantity",
    "CommitmentDiscountStatus", "CommitmentDiscountType", "CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit",
    "ContractedCost", "ContractedUnitPrice", "EffectiveCost", "InvoiceId", "InvoiceIssuerName", "ListCost",
    "ListUnitPrice", "PricingCategory", "PricingCurrency", "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice", "PricingQuantity", "PricingUnit", "ProviderName",
    "PublisherName", "RegionId", "RegionName", "ResourceId", "ResourceName", "ResourceType", "ServiceCategory",
    "ServiceName", "ServiceSubcategory", "SkuId", "SkuMeter", "SkuPriceDetails", "SkuPriceId", "SubAccountId",
    "SubAccountName", "SubAccountType", "Tags",
))


# Columns only FOCUS 1.3 and later write, and those only 1.4 writes (the 1.4 cost and usage
# columns its Invoice Detail and commitment program datasets link to).
FOCUS_13_MARKS = frozenset(("ServiceProviderName", "HostProviderName", "ContractApplied", "AllocatedMethodId",
                            "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags"))
FOCUS_14_MARKS = frozenset(("InvoiceDetailId", "CommitmentProgramEligibilityDetails"))


def kept_as_written(column: str) -> bool:
    return column in FOCUS_12 or column.startswith("x_")


@register
class FocusReader(BillingReader):
    kind = "focus"
    description = "FinOps FOCUS billing export (0.5 to 1.4)"
    aliases = ALIASES
    line_columns = {"billed_cost": ("BilledCost",), "effective_cost": ("EffectiveCost", "BilledCost"), "list_cost": ("ListCost",),
                    "consumed_quantity": ("ConsumedQuantity",), "consumed_unit": ("ConsumedUnit",),
                    "charge_period_end": ("ChargePeriodEnd",)}

    def sniff(self, head: Head) -> str | None:
        cols = set(head.columns)
        if {"BilledCost", "ChargePeriodStart"} <= cols and cols & FOCUS_13_MARKS:
            # 1.4 drops ProviderName and PublisherName, deprecated in 1.3
            return "1.4" if cols & FOCUS_14_MARKS or not {"ProviderName", "PublisherName"} & cols else "1.3"
        if {"ChargeType", "InvoiceIssuer"} <= cols and "BilledCost" not in cols:
            return "0.5-draft"   # focus_validator's draft-era fixtures; missing columns are named later
        if not {"BilledCost", "ChargePeriodStart"} <= cols:
            return None
        if "ChargeType" in cols or "AmortizedCost" in cols:
            return "0.5"
        if "UsageQuantity" in cols or "ChargeSubcategory" in cols:
            return "1.0-preview"
        if {"InvoiceId", "PricingCurrency", "BillingAccountType"} & cols and "ServiceSubcategory" in cols:
            return "1.2"
        if "ServiceSubcategory" in cols or "SkuMeter" in cols:
            return "1.1"
        return "1.0"

    def stage_rows(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any], padded: bool) -> Staged:
        # FOCUS exports write missing values as empty cells and, in the official sample, as the
        # literal NULL; both are nulls here (and only here: other formats may mean "NULL").
        canonical_view(con, head, ALIASES, REQUIRED, "raw_focus", nullstr=("", "NULL"), numbered=False, padded=padded,
                       keep_as_written=kept_as_written)
        rows_read = stage_sql(con, head.path, "stg_focus__charges.sql", rowid_numbers=True)
        origins = set_origins_aside(con)
        staged = self.finish(con, head, rows_read, self.sniff(head) or "1.0")
        if origins:
            staged.notes.append(origins)
        return staged

    def load(self, con: duckdb.DuckDBPyConnection, file_id: int) -> int:
        n = super().load(con, file_id)
        con.execute("""insert into charge_source_columns
                       select ?, row_number, _source_columns from _staged
                       anti join (select distinct row_number from _rejects) r using (row_number)""", [file_id])
        loaded = "(select * from _staged anti join (select distinct row_number from _rejects) r using (row_number))"
        for table, query in provider_parts_sql(loaded).items():
            con.execute(f"insert into {table} select ?, * from ({query})", [file_id])
        con.execute("""insert into focus_origin_charges
                       select ?, row_number, resource_id, charge_period_start, billing_currency, billed_cost, effective_cost,
                              _origin_of, _allocated_billed_cost
                       from _focus_origins""", [file_id])
        return n + one_row(con, "select count(*) from _focus_origins")[0]

    def remove(self, con: duckdb.DuckDBPyConnection, file_id: int) -> None:
        super().remove(con, file_id)
        for table in ("charge_source_columns", "focus_allocations", "charge_contracts", "focus_origin_charges"):
            con.execute(f"delete from {table} where file_id = ?", [file_id])

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        t = super().totals(con, file_id)
        allocated = one_row(con, "select count(*) from focus_allocations where file_id = ?", [file_id])[0]
        origins = one_row(con, "select count(*) from focus_origin_charges where file_id = ?", [file_id])[0]
        return {**t, "provider_allocated_rows": allocated, "origin_charges_aside": origins} if allocated or origins else t


def provider_parts_sql(loaded: str) -> dict[str, str]:
    """What the provider wrote inside a loaded row, per table (without file_id): its allocation
    (focus_allocations) and the commitments applied to it (charge_contracts). `loaded` is a
    relation of the file's loaded staged rows. Both engines run this on DuckDB (on Spark, over
    the few rows that carry either, on the driver)."""
    # AllocatedMethodDetails: {"Elements": [{"AllocatedRatio", "UsageUnit", "UsageQuantity"}]}
    allocations = f"""
        select row_number, _allocated_method_id, _allocated_resource_id, _allocated_resource_name,
               list_sum(list_transform(json_extract(d, '$.Elements[*].AllocatedRatio'), lambda x: try_cast(x as double))),
               list_sum(list_transform(json_extract(d, '$.Elements[*].UsageQuantity'), lambda x: try_cast(x as double))),
               case when len(list_distinct(json_extract_string(d, '$.Elements[*].UsageUnit'))) = 1
                    then json_extract_string(d, '$.Elements[*].UsageUnit')[1] end,
               _allocated_tags, _allocated_method_details
        from (select *, case when json_valid(_allocated_method_details) then _allocated_method_details end as d
              from {loaded} where _allocated_method_id is not null)"""
    # ContractApplied: {"Elements": [{"ContractId", "ContractCommitmentId", "ContractCommitmentAppliedCost" |
    # "ContractCommitmentAppliedQuantity", "ContractCommitmentAppliedUnit"}]}
    contracts = f"""
        select row_number, e->>'ContractId', e->>'ContractCommitmentId',
               try_cast(e->>'ContractCommitmentAppliedCost' as decimal(38, 12)),
               try_cast(e->>'ContractCommitmentAppliedQuantity' as double), e->>'ContractCommitmentAppliedUnit'
        from (select row_number, unnest(from_json(_contract_applied::json->'Elements', '["json"]')) as e
              from {loaded} where json_valid(_contract_applied))"""
    return {"focus_allocations": allocations, "charge_contracts": contracts}


# The spec's rule: an allocated row's dimensions match its origin charge's.
ORIGIN_KEY = ("billing_account_id", "sub_account_id", "resource_id", "charge_period_start", "charge_period_end",
              "charge_category", "_sku_price_id", "billing_currency")


def origins_sql(staged: str, rejected: str) -> str:
    """The origin charges of `staged` (a staged FOCUS file) whose allocated rows it also has,
    rows of `rejected` (a relation of row_number) left out, with how many allocated rows each
    has and their billed cost. One query for both engines (the Spark ingest translates it)."""
    key = ", ".join(ORIGIN_KEY)
    match = " and ".join(f"s.{k} is not distinct from a.{k}" for k in ORIGIN_KEY)
    return f"""with allocated as (
                   select {key}, count(*) as _origin_of, sum(billed_cost) as _allocated_billed_cost
                   from {staged} where _allocated_method_id is not null group by {key})
               select s.*, a._origin_of, a._allocated_billed_cost
               from {staged} s join allocated a on {match}
               where s._allocated_method_id is null and s.row_number not in (select row_number from {rejected})"""


def origins_note(n: int, differ: int) -> str:
    """What the ingest says of the n (> 0) origin charges it set aside."""
    note = (f"{n} origin charge{'s' if n > 1 else ''} split by the provider into allocated rows: the allocated rows "
            "are loaded as charges, the origin kept aside (focus_origin_charges) so its cost counts once")
    if differ:
        note += f"; {differ} of them differ from the sum of their allocated rows (the allocated rows are counted)"
    return note


def set_origins_aside(con: duckdb.DuckDBPyConnection) -> str | None:
    """Take the origin charges whose allocated rows the file also has out of _staged (into
    _focus_origins): their cost is in the allocated rows. Returns the note saying so, or None."""
    con.execute(f"create or replace temp table _focus_origins as {origins_sql('_staged', '_rejects')}")
    n, differ = one_row(con, """select count(*), count(*) filter (where billed_cost <> _allocated_billed_cost)
                                from _focus_origins""")
    if not n:
        return None
    is_view = one_row(con, "select count(*) from duckdb_views() where view_name = '_staged' and temporary")[0]
    con.execute("create or replace temp table _focus_kept as select * from _staged where row_number not in "
                "(select row_number from _focus_origins)")
    con.execute(f"drop {'view' if is_view else 'table'} _staged")
    con.execute("alter table _focus_kept rename to _staged")
    return origins_note(n, differ)
