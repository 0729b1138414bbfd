"""Azure Cost Management exports: EA and MCA cost details, actual or amortized (CSV, CSV.gz,
Parquet). Column names drift between export versions; the aliases below absorb it."""
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
    "quantity": ("Quantity", "UsageQuantity", "quantity"),
    "unit_of_measure": ("UnitOfMeasure", "unitOfMeasure"),
    "cost": ("CostInBillingCurrency", "Cost", "costInBillingCurrency", "PreTaxCost"),
    "paygo_price": ("PayGPrice", "payGPrice"),
    "currency": ("BillingCurrency", "BillingCurrencyCode", "Currency", "billingCurrency"),
    "tags": ("Tags", "tags"),
    "additional_info": ("AdditionalInfo", "additionalInfo"),
    "reservation_id": ("ReservationId", "reservationId"),
    "benefit_id": ("benefitId", "BenefitId"),
    "invoice_id": ("InvoiceId", "invoiceId"),
}
REQUIRED = {"usage_date", "cost", "charge_type"}


@register
class AzureCostReader(BillingReader):
    kind = "azure-cost"
    description = "Azure cost details export (EA/MCA, actual or amortized)"

    def sniff(self, head: Head) -> str | None:
        cols = set(head.columns)
        if "MeterCategory" not in cols and "meterCategory" not in cols:
            return None
        if "CostInBillingCurrency" in cols:
            return "cost-details-billing-currency"
        if "Cost" in cols or "PreTaxCost" in cols:
            return "cost-details"
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        canonical_view(con, head, ALIASES, REQUIRED, "raw_azure", numbered=False)
        rows_read = stage_sql(con, head.path, "stg_azure_cost__charges.sql", rowid_numbers=True)
        return self.finish(con, rows_read, self.sniff(head) or "cost-details")
