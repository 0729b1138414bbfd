"""Azure Cost Management exports: EA and MCA cost details, actual or amortized (CSV, CSV.gz,
Parquet), and the older usage-details layout (SubscriptionGuid, UsageDateTime, PreTaxCost; in
PascalCase or camelCase). Column names drift between export versions; the aliases below absorb
it, and names match whatever their case, or by the English name a localised header carries in
parentheses (`Kosten (Cost)`)."""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import literal
from sources.base import Head, Staged, register
from sources.billing import BillingReader
from sources.tabular import canonical_view, english_name, source_name, stage_sql

ALIASES: dict[str, tuple[str, ...]] = {
    "billing_account_id": ("BillingAccountId", "billingAccountId"),
    "subscription_id": ("SubscriptionId", "SubscriptionGuid", "subscriptionId"),
    "period_start": ("BillingPeriodStartDate", "billingPeriodStartDate"),
    "usage_date": ("Date", "UsageDateTime", "date"),
    "charge_type": ("ChargeType", "chargeType"),
    "pricing_model": ("PricingModel", "pricingModel"),
    "meter_category": ("MeterCategory", "meterCategory"),
    "meter_subcategory": ("MeterSubCategory", "meterSubCategory"),
    "meter_name": ("MeterName", "meterName"),
    "meter_id": ("MeterId", "meterId"),
    "service_family": ("ServiceFamily", "serviceFamily"),
    "consumed_service": ("ConsumedService", "consumedService"),
    "product": ("Product", "ProductName", "productName"),
    "resource_id": ("ResourceId", "InstanceId", "resourceId"),
    "resource_location": ("ResourceLocation", "resourceLocation"),
    "quantity": ("Quantity", "UsageQuantity"),
    "unit_of_measure": ("UnitOfMeasure", "unitOfMeasure"),
    "cost": ("CostInBillingCurrency", "Cost", "PreTaxCost"),
    "paygo_price": ("PayGPrice", "payGPrice"),
    "currency": ("BillingCurrency", "BillingCurrencyCode", "Currency", "billingCurrency"),
    "tags": ("Tags", "tags"),
    "additional_info": ("AdditionalInfo", "additionalInfo"),
    "reservation_id": ("ReservationId", "reservationId"),
    "benefit_id": ("benefitId", "BenefitId"),
    "invoice_id": ("InvoiceId", "invoiceId"),
}
REQUIRED = {"usage_date", "cost", "charge_type"}
COST_COLUMNS = {a.lower() for a in ALIASES["cost"]}
# An export without ChargeType (the 2019 usage-details layout, or a cost-details export with the
# column left out) lists usage only.
NO_CHARGE_TYPE = {"charge_type": "'Usage'"}
# Located errors name the export's own column: its name for these in the staging model's slots.
NAMED = {"cost": "cost_column", "usage_date": "date_column", "quantity": "quantity_column", "charge_type": "charge_type_column"}


def header_names(head: Head) -> tuple[str, ...]:
    """The header as matched: a localised name by the English name it carries (`Kosten (Cost)`)."""
    return tuple(english_name(c.strip()) for c in head.columns)


@register
class AzureCostReader(BillingReader):
    kind = "azure-cost"
    description = "Azure cost details export (EA/MCA, actual or amortized)"
    aliases = ALIASES
    line_columns = {"billed_cost": ("cost",), "effective_cost": ("cost",), "list_cost": ("paygo_price",), "consumed_quantity": ("quantity",),
                    "consumed_unit": ("unit_of_measure",), "charge_period_end": ("usage_date",)}
    localised = True

    def sniff(self, head: Head) -> str | None:
        cols = {c.lower() for c in header_names(head)}
        if "metercategory" not in cols or not COST_COLUMNS & cols:
            return None
        if "costinbillingcurrency" in cols:
            return "cost-details-billing-currency"
        if "chargetype" not in cols:
            return "usage-details-legacy"
        return "cost-details"

    def stage_rows(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any], padded: bool) -> Staged:
        version = self.sniff(head) or "cost-details"
        charge_types = source_name(head.columns, ALIASES["charge_type"], localised=True) is not None
        canonical_view(con, head, ALIASES, REQUIRED, "raw_azure", numbered=False, padded=padded,
                       defaults=None if charge_types else NO_CHARGE_TYPE, localised=True)
        names = {slot: literal(source_name(head.columns, ALIASES[name], localised=True) or ALIASES[name][0])
                 for name, slot in NAMED.items()}
        rows_read = stage_sql(con, head.path, "stg_azure_cost__charges.sql", names, rowid_numbers=True)
        staged = self.finish(con, head, rows_read, version)
        if not charge_types:
            staged.notes.append("no ChargeType column: every row read as Usage (the usage-details layout lists usage only)")
        return staged
