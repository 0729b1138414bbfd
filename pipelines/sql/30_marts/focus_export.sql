-- FOCUS 1.2 rows for every charge line, with energy, carbon and allocation as x_ columns (AWS
-- split rows aside: they re-describe their node's line, whose x_Allocations carry the split).
-- Grain: one row per charges line (file, row, charge_line). Energy of a billed resource in a
-- month (measured or estimated, int_energy_lines) is shared over its GPU-capacity lines by
-- GPU-hours; other lines carry no energy. Lossless for FOCUS inputs: a column the input had
-- (charge_source_columns) is carried as written, typed where FOCUS types it (Decimal, Date/Time
-- as TIMESTAMP, UTC); a column it lacked, and every column of other formats, is derived.
-- The input's own x_ columns ride in x_source_columns (export focus spreads them out);
-- source_group links a line to its allocation (focus_allocated splits it).
-- Allocation: the team taking the largest share of the line's billed cost (x_Team, by
-- x_AllocationRule, x_AllocatedShare 0-1), and every team's share in x_Allocations (JSON).
with resource_energy as (
    select resource_id, month,
        sum(it_energy_kwh) as it_kwh, sum(facility_energy_kwh) as kwh,
        sum(facility_energy_kwh_low) as kwh_low, sum(facility_energy_kwh_high) as kwh_high,
        sum(co2e_kg) as co2e, sum(co2e_kg_low) as co2e_low, sum(co2e_kg_high) as co2e_high
    from int_energy_lines where resource_id is not null
    group by all
),

resource_hours as (
    select resource_id, month, sum(gpu_hours) as gpu_hours
    from int_charges_teams where gpu_hours > 0 group by all
),

allocations as (
    select source_group,
        list({'team': team, 'rule': rule, 'share': share} order by share desc, team asc, rule asc) as parts
    from allocation_lines
    where meter = 'billed_cost'
    group by all
),

lines as (
    select c.*, f.sha256, w.columns as src, a.parts,
        c.gpu_hours / nullif(h.gpu_hours, 0) as energy_share,
        e.kwh, e.kwh_low, e.kwh_high, e.co2e, e.co2e_low, e.co2e_high,
        x.reporting_currency, x.rate as fx_rate
    from int_charges_teams c
    join source_files f using (file_id)
    left join resource_hours h on h.resource_id = c.resource_id and h.month = c.month and c.gpu_hours > 0
    left join resource_energy e on e.resource_id = c.resource_id and e.month = c.month and c.gpu_hours > 0
    left join charge_source_columns w on w.file_id = c.file_id and w.row_number = c.row_number and c.charge_line = 0
    left join allocations a on a.source_group = c.source_group
    left join int_fx_applied x on x.month = c.month and x.from_currency = c.billing_currency
        and x.day is not distinct from c.charge_period_start::date
),

derived as (
    -- what FOCUS says each column holds, from the normalized charge (used where the input has no such column)
    select *,
        coalesce(billing_period_start, date_trunc('month', charge_period_start)) as bps,
        case charge_category when 'Usage' then 'Usage-Based' when 'Purchase' then 'Recurring' else 'One-Time' end as frequency,
        case when commitment_discount_id is not null then
            case when commitment_discount_id ilike '%savingsplan%' then 'Spend' else 'Usage' end end as cd_category,
        case when commitment_discount_id is not null and charge_category = 'Usage' then
            case when line_item_type in ('UnusedReservation', 'UnusedSavingsPlan') then 'Unused' else 'Used' end end as cd_status,
        case when commitment_discount_id is not null then
            case when commitment_discount_id ilike '%savingsplan%' then 'Savings Plan' else 'Reservation' end end as cd_type,
        case when charge_category = 'Usage' and consumed_quantity is not null then coalesce(consumed_unit, 'Units') end as usage_unit,
        case
            when service_category in ('AI and Machine Learning', 'Analytics', 'Business Applications', 'Compute', 'Databases',
                 'Developer Tools', 'Multicloud', 'Identity', 'Integration', 'Internet of Things', 'Management and Governance',
                 'Media', 'Migration', 'Mobile', 'Networking', 'Security', 'Storage', 'Web', 'Other') then service_category
            when regexp_matches(coalesce(service_name, ''), '(?i)sagemaker|machine learning|vertex|bedrock') then 'AI and Machine Learning'
            when regexp_matches(coalesce(service_name, ''), '(?i)compute|ec2|virtual machine|kubernetes|container|lambda') then 'Compute'
            when regexp_matches(coalesce(service_name, ''), '(?i)storage|s3|disk') then 'Storage'
            when regexp_matches(coalesce(service_name, ''), '(?i)transfer|network|vpc|cloudfront|bandwidth') then 'Networking'
            when regexp_matches(coalesce(service_name, ''), '(?i)database|rds|sql|dynamo') then 'Databases'
            when regexp_matches(coalesce(service_name, ''), '(?i)support|monitor|cloudwatch') then 'Management and Governance'
            else 'Other'
        end as category,
        case when charge_category <> 'Tax' then sku_id end as sku,
        -- a purchase without a quantity is one of what was bought
        case when charge_category = 'Usage' then consumed_quantity::decimal(38, 12)
             when charge_category = 'Purchase' then coalesce(consumed_quantity::decimal(38, 12), 1) end as pq,
        -- unit prices where the bill gives none: cost per priced unit (null without a quantity)
        nullif(pq, 0) as price_qty,
        -- what a commitment line used of it: money for a spend commitment, units for a usage one
        case when cd_category = 'Spend' then effective_cost when cd_category = 'Usage' then consumed_quantity::decimal(38, 12) end as cd_quantity,
        case when cd_category = 'Spend' then billing_currency when cd_category = 'Usage' then coalesce(consumed_unit, 'Units') end as cd_unit
    from lines
),

focus as (
    select
        month,
        written_or(src, 'AvailabilityZone', null) as AvailabilityZone,
        written_money_or(src, 'BilledCost', billed_cost) as BilledCost,
        written_or(src, 'BillingAccountId', billing_account_id) as BillingAccountId,
        written_or(src, 'BillingAccountName', null) as BillingAccountName,
        written_or(src, 'BillingAccountType', case when billing_account_id is not null then 'Billing Account' end) as BillingAccountType,
        written_or(src, 'BillingCurrency', billing_currency) as BillingCurrency,
        written_ts_or(src, 'BillingPeriodEnd', bps + interval 1 month) as BillingPeriodEnd,
        written_ts_or(src, 'BillingPeriodStart', bps) as BillingPeriodStart,
        written_or(src, 'CapacityReservationId', null) as CapacityReservationId,
        written_or(src, 'CapacityReservationStatus', null) as CapacityReservationStatus,
        written_or(src, 'ChargeCategory', charge_category) as ChargeCategory,
        written_or(src, 'ChargeClass', charge_class) as ChargeClass,
        written_or(src, 'ChargeDescription', charge_description) as ChargeDescription,
        written_or(src, 'ChargeFrequency', frequency) as ChargeFrequency,
        written_ts_or(src, 'ChargePeriodEnd', coalesce(charge_period_end, charge_period_start)) as ChargePeriodEnd,
        written_ts_or(src, 'ChargePeriodStart', charge_period_start) as ChargePeriodStart,
        written_or(src, 'CommitmentDiscountCategory', cd_category) as CommitmentDiscountCategory,
        written_or(src, 'CommitmentDiscountId', commitment_discount_id) as CommitmentDiscountId,
        written_or(src, 'CommitmentDiscountName', commitment_discount_id) as CommitmentDiscountName,
        written_money_or(src, 'CommitmentDiscountQuantity', cd_quantity) as CommitmentDiscountQuantity,
        written_or(src, 'CommitmentDiscountStatus', cd_status) as CommitmentDiscountStatus,
        written_or(src, 'CommitmentDiscountType', cd_type) as CommitmentDiscountType,
        written_or(src, 'CommitmentDiscountUnit', cd_unit) as CommitmentDiscountUnit,
        written_money_or(src, 'ConsumedQuantity', case when charge_category = 'Usage' then consumed_quantity::decimal(38, 12) end) as ConsumedQuantity,
        written_or(src, 'ConsumedUnit', usage_unit) as ConsumedUnit,
        -- No negotiated price in most exports: contracted = effective is the honest fallback
        written_money_or(src, 'ContractedCost', effective_cost) as ContractedCost,
        written_money_or(src, 'ContractedUnitPrice', (effective_cost / price_qty)::decimal(38, 12)) as ContractedUnitPrice,
        written_money_or(src, 'EffectiveCost', effective_cost) as EffectiveCost,
        written_or(src, 'InvoiceId', invoice_id) as InvoiceId,
        written_or(src, 'InvoiceIssuerName', provider) as InvoiceIssuerName,
        written_money_or(src, 'ListCost', coalesce(list_cost, billed_cost)) as ListCost,
        written_money_or(src, 'ListUnitPrice', (coalesce(list_cost, billed_cost) / price_qty)::decimal(38, 12)) as ListUnitPrice,
        written_or(src, 'PricingCategory',
            case when pricing_category in ('Standard', 'Dynamic', 'Committed', 'Other') then pricing_category
                 when charge_category in ('Usage', 'Purchase') and charge_class is null then 'Standard' end) as PricingCategory,
        written_or(src, 'PricingCurrency', billing_currency) as PricingCurrency,
        written_money_or(src, 'PricingCurrencyContractedUnitPrice', (effective_cost / price_qty)::decimal(38, 12)) as PricingCurrencyContractedUnitPrice,
        written_money_or(src, 'PricingCurrencyEffectiveCost', effective_cost) as PricingCurrencyEffectiveCost,
        written_money_or(src, 'PricingCurrencyListUnitPrice', (coalesce(list_cost, billed_cost) / price_qty)::decimal(38, 12)) as PricingCurrencyListUnitPrice,
        written_money_or(src, 'PricingQuantity', pq) as PricingQuantity,
        written_or(src, 'PricingUnit', case when charge_category = 'Purchase' then coalesce(consumed_unit, 'Units') else usage_unit end) as PricingUnit,
        written_or(src, 'ProviderName', provider) as ProviderName,
        written_or(src, 'PublisherName', provider) as PublisherName,
        written_or(src, 'RegionId', region) as RegionId,
        written_or(src, 'RegionName', region) as RegionName,
        written_or(src, 'ResourceId', resource_id) as ResourceId,
        written_or(src, 'ResourceName', resource_id) as ResourceName,
        written_or(src, 'ResourceType', case when instance_type is not null then 'Instance' end) as ResourceType,
        written_or(src, 'ServiceCategory', category) as ServiceCategory,
        written_or(src, 'ServiceName', coalesce(service_name, 'Unknown')) as ServiceName,
        written_or(src, 'ServiceSubcategory', 'Other (' || category || ')') as ServiceSubcategory,
        written_or(src, 'SkuId', sku) as SkuId,
        written_or(src, 'SkuMeter', null) as SkuMeter,
        written_or(src, 'SkuPriceDetails', null) as SkuPriceDetails,
        written_or(src, 'SkuPriceId', sku) as SkuPriceId,
        written_or(src, 'SubAccountId', sub_account_id) as SubAccountId,
        written_or(src, 'SubAccountName', sub_account_id) as SubAccountName,
        written_or(src, 'SubAccountType', case when sub_account_id is not null then 'Sub Account' end) as SubAccountType,
        written_or(src, 'Tags', to_json(tags)::varchar) as Tags,
        gpu_model as x_GpuModel,
        gpu_count as x_GpuCount,
        gpu_hours as x_GpuHours,
        kwh * energy_share as x_EnergyKwh,
        kwh_low * energy_share as x_EnergyKwhLow,
        kwh_high * energy_share as x_EnergyKwhHigh,
        co2e * energy_share as x_CO2eKg,
        co2e_low * energy_share as x_CO2eKgLow,
        co2e_high * energy_share as x_CO2eKgHigh,
        parts[1].team as x_Team,
        parts[1].rule as x_AllocationRule,
        parts[1].share as x_AllocatedShare,
        to_json(parts)::varchar as x_Allocations,
        reporting_currency as x_ReportingCurrency,
        fx_rate as x_ExchangeRate,
        (billed_cost * fx_rate)::decimal(38, 12) as x_BilledCostInReportingCurrency,
        (effective_cost * fx_rate)::decimal(38, 12) as x_EffectiveCostInReportingCurrency,
        sha256 as x_SourceFileSha256,
        row_number as x_SourceRow,
        charge_line as x_SourceLine,
        map_from_entries(list_filter(map_entries(coalesce(src, map())), lambda e: starts_with(e.key, 'x_'))) as x_source_columns,
        source_group
    from derived
)

select * from focus
