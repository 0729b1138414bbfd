"""What the clouds report as an account's carbon footprint (kind `aws-carbon`, `gcp-carbon`):
AWS Data Exports' CARBON_EMISSIONS table and Google Cloud's Carbon Footprint export, as CSV,
JSON lines or Parquet, into `provider_carbon` (kg CO2e, the provider's model version kept).

AWS columns, as the Data Exports user guide names them: usage_period_start, usage_period_end,
payer_account_id, usage_account_id, product_code, region_code, location,
total_lbm_emissions_value, total_lbm_emissions_unit, total_mbm_emissions_value,
total_mbm_emissions_unit, model_version, last_refresh_timestamp. Google fields, as its export
schema names them: usage_month, billing_account_id, project.id, service.description,
location.location, location.region, carbon_footprint_kgCO2e.scope1,
carbon_footprint_kgCO2e.scope2.location_based / .market_based, carbon_footprint_kgCO2e.scope3,
carbon_footprint_total_kgCO2e.location_based / .market_based, carbon_model_version (CSV with
those dotted names, or JSON lines nested one level: project.id, location.region).
The reconciliation against meterbook's own figures is the provider_carbon_reconciliation mart.
"""
from __future__ import annotations

from typing import Any

import duckdb

from core.sql import one_row
from core.units import KG_PER_T
from sources.base import Head, Reader, Staged, register
from sources.linecount import LineCount
from sources.tabular import canonical_view, csv_names, stage_sql, tabular_dialect, tabular_expected_rows

AWS_COLUMNS = ("usage_period_start", "usage_period_end", "payer_account_id", "usage_account_id", "product_code",
               "region_code", "location", "total_lbm_emissions_value", "total_lbm_emissions_unit",
               "total_mbm_emissions_value", "total_mbm_emissions_unit", "model_version")
AWS_ALIASES: dict[str, tuple[str, ...]] = {c: (c,) for c in AWS_COLUMNS}
AWS_REQUIRED = {"usage_period_start", "usage_account_id", "total_lbm_emissions_value", "model_version"}

GCP_ALIASES: dict[str, tuple[str, ...]] = {
    "usage_month": ("usage_month",),
    "billing_account_id": ("billing_account_id",),
    "project_id": ("project.id", "project_id"),
    "service": ("service.description", "service_description"),
    "region": ("location.region", "location_region"),
    "location": ("location.location", "location_location"),
    "scope1": ("carbon_footprint_kgCO2e.scope1",),
    "scope2_location": ("carbon_footprint_kgCO2e.scope2.location_based",),
    "scope2_market": ("carbon_footprint_kgCO2e.scope2.market_based",),
    "scope3": ("carbon_footprint_kgCO2e.scope3",),
    "total_location": ("carbon_footprint_total_kgCO2e.location_based",),
    "total_market": ("carbon_footprint_total_kgCO2e.market_based",),
    "carbon_model_version": ("carbon_model_version",),
}
GCP_REQUIRED = {"usage_month", "billing_account_id", "carbon_model_version"}


class ProviderCarbonReader(Reader):
    table = "provider_carbon"
    aliases: dict[str, tuple[str, ...]] = {}
    required: set[str] = set()
    view = ""
    model = ""

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        canonical_view(con, head, self.aliases, self.required, self.view, padded=bool(options.get("padded")))
        rows_read = stage_sql(con, head.path, self.model, self.slots())
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or self.kind)

    def slots(self) -> dict[str, str]:
        return {}

    def dialect(self, head: Head) -> str | None:
        return tabular_dialect(head)

    def expected_rows(self, con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None, staged: Staged) -> int | None:
        return tabular_expected_rows(con, head, count)

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        n, kg, versions = one_row(con, """select count(*), sum(co2e_location_kg), list(distinct model_version order by model_version)
                                          from provider_carbon where file_id = ?""", [file_id])
        return {"rows": n, "co2e_location_kg": float(kg or 0), "model_versions": versions or []}


def _names(head: Head) -> set[str]:
    return set(csv_names(head)) if not head.parquet else set(head.columns)


@register
class AwsCarbonReader(ProviderCarbonReader):
    kind = "aws-carbon"
    description = "AWS Data Exports CARBON_EMISSIONS (usage_account_id, product_code, region_code, total_lbm_emissions_value, model_version)"
    aliases, required, view, model = AWS_ALIASES, AWS_REQUIRED, "raw_aws_carbon", "stg_aws_carbon__emissions.sql"

    def slots(self) -> dict[str, str]:
        # AWS writes metric tonnes; the warehouse keeps kg
        return {"kg_per_t": repr(KG_PER_T)}

    def sniff(self, head: Head) -> str | None:
        return "aws-carbon-emissions" if {"usage_period_start", "usage_account_id", "total_lbm_emissions_value"} <= _names(head) else None


@register
class GcpCarbonReader(ProviderCarbonReader):
    kind = "gcp-carbon"
    description = "Google Cloud Carbon Footprint export (usage_month, billing_account_id, project.id, carbon_footprint_total_kgCO2e.*)"
    aliases, required, view, model = GCP_ALIASES, GCP_REQUIRED, "raw_gcp_carbon", "stg_gcp_carbon__footprint.sql"

    def sniff(self, head: Head) -> str | None:
        names = _names(head)
        carbon = any(n.startswith(("carbon_footprint_total_kgCO2e", "carbon_footprint_kgCO2e")) for n in names)
        return "gcp-carbon-footprint" if carbon and {"usage_month", "carbon_model_version"} <= names else None
