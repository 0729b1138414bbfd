"""Azure Cost Management exports: EA and MCA cost details, actual or amortized (CSV, CSV.gz,
Parquet), and the older usage-details layout (SubscriptionGuid, UsageDateTime, PreTaxCost; in
PascalCase or camelCase). Column names drift between export versions; the aliases below absorb
it, and names match whatever their case."""
from __future__ import annotations

from typing import Any

import duckdb

from sources.base import Head, Staged, register
from sources.billing import BillingReader
from sources.tabular import canonical_view, stage_sql

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
# The 2019 usage-details export has no ChargeType: it lists usage only.
LEGACY_DEFAULTS = {"charge_type": "'Usage'"}


@register
class AzureCostReader(BillingReader):
    kind = "azure-cost"
    description = "Azure cost details export (EA/MCA, actual or amortized)"

    def sniff(self, head: Head) -> str | None:
        cols = {c.lower() for c in head.columns}
        if "metercategory" not in cols or not COST_COLUMNS & cols:
            return None
        if "costinbillingcurrency" in cols:
            return "cost-details-billing-currency"
        if "chargetype" not in cols:
            return "usage-details-legacy"
        return "cost-details"

    def stage_rows(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any], padded: bool) -> Staged:
        version = self.sniff(head) or "cost-details"
        legacy = version == "usage-details-legacy"
        canonical_view(con, head, ALIASES, REQUIRED, "raw_azure", numbered=False, padded=padded,
                       defaults=LEGACY_DEFAULTS if legacy else None)
        rows_read = stage_sql(con, head.path, "stg_azure_cost__charges.sql", rowid_numbers=True)
        staged = self.finish(con, rows_read, version)
        if legacy:
            staged.notes.append("no ChargeType column (usage-details export): every row read as Usage")
        return staged
