-- FOCUS 1.2 rows for every charge line, with energy and carbon as x_ columns.
-- Grain: one row per charges line (file, row, charge_line). Energy of a billed resource in a
-- month (measured or estimated, int_energy_lines) is shared over its GPU-capacity lines by
-- GPU-hours; other lines carry no energy. Text formats follow FOCUS: ISO 8601 UTC with Z.
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

lines as (
    select c.*, f.sha256,
        c.gpu_hours / nullif(h.gpu_hours, 0) as energy_share,
        e.kwh, e.kwh_low, e.kwh_high, e.co2e, e.co2e_low, e.co2e_high
    from int_charges_teams c
    join source_files f using (file_id)
    left join resource_hours h on h.resource_id = c.resource_id and h.month = c.month and c.gpu_hours > 0
    left join resource_energy e on e.resource_id = c.resource_id and e.month = c.month and c.gpu_hours > 0
),

focus as (
    select
        month,
        billed_cost::decimal(38, 10) as BilledCost,
        billing_account_id as BillingAccountId,
        null::varchar as BillingAccountName,
        billing_currency as BillingCurrency,
        strftime(coalesce(billing_period_start, date_trunc('month', charge_period_start)), '%Y-%m-%dT%H:%M:%SZ') as BillingPeriodStart,
        strftime(coalesce(billing_period_start, date_trunc('month', charge_period_start)) + interval 1 month, '%Y-%m-%dT%H:%M:%SZ') as BillingPeriodEnd,
        charge_category as ChargeCategory,
        charge_class as ChargeClass,
        charge_description as ChargeDescription,
        case charge_category when 'Usage' then 'Usage-Based' when 'Purchase' then 'Recurring' else 'One-Time' end as ChargeFrequency,
        strftime(charge_period_start, '%Y-%m-%dT%H:%M:%SZ') as ChargePeriodStart,
        strftime(coalesce(charge_period_end, charge_period_start), '%Y-%m-%dT%H:%M:%SZ') as ChargePeriodEnd,
        case when commitment_discount_id is not null then
            case when commitment_discount_id ilike '%savingsplan%' then 'Spend' else 'Usage' end end as CommitmentDiscountCategory,
        commitment_discount_id as CommitmentDiscountId,
        commitment_discount_id as CommitmentDiscountName,
        case when commitment_discount_id is not null and charge_category = 'Usage' then
            case when line_item_type in ('UnusedReservation', 'UnusedSavingsPlan') then 'Unused' else 'Used' end end as CommitmentDiscountStatus,
        case when commitment_discount_id is not null then
            case when commitment_discount_id ilike '%savingsplan%' then 'Savings Plan' else 'Reservation' end end as CommitmentDiscountType,
        case when charge_category = 'Usage' then consumed_quantity end as ConsumedQuantity,
        case when charge_category = 'Usage' and consumed_quantity is not null then coalesce(consumed_unit, 'Units') end as ConsumedUnit,
        -- No negotiated price in most exports: contracted = billed is the honest fallback
        effective_cost::decimal(38, 10) as ContractedCost,
        effective_cost::decimal(38, 10) as EffectiveCost,
        provider as InvoiceIssuerName,
        coalesce(list_cost, billed_cost)::decimal(38, 10) as ListCost,
        case when pricing_category in ('Standard', 'Dynamic', 'Committed', 'Other') then pricing_category
             when charge_category in ('Usage', 'Purchase') and charge_class is null then 'Standard' end as PricingCategory,
        -- a purchase without a quantity is one of what was bought
        case when charge_category = 'Usage' then consumed_quantity
             when charge_category = 'Purchase' then coalesce(consumed_quantity, 1) end as PricingQuantity,
        case when charge_category = 'Usage' and consumed_quantity is not null then coalesce(consumed_unit, 'Units')
             when charge_category = 'Purchase' then coalesce(consumed_unit, 'Units') end as PricingUnit,
        provider as ProviderName,
        provider as PublisherName,
        region as RegionId,
        region as RegionName,
        resource_id as ResourceId,
        resource_id as ResourceName,
        case when instance_type is not null then 'Instance' end as ResourceType,
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
        end as ServiceCategory,
        coalesce(service_name, 'Unknown') as ServiceName,
        case when charge_category <> 'Tax' then sku_id end as SkuId,
        case when charge_category <> 'Tax' then sku_id end as SkuPriceId,
        sub_account_id as SubAccountId,
        sub_account_id as SubAccountName,
        to_json(tags)::varchar as Tags,
        gpu_model as x_GpuModel,
        gpu_count as x_GpuCount,
        gpu_hours as x_GpuHours,
        kwh * energy_share as x_EnergyKwh,
        kwh_low * energy_share as x_EnergyKwhLow,
        kwh_high * energy_share as x_EnergyKwhHigh,
        co2e * energy_share as x_CO2eKg,
        co2e_low * energy_share as x_CO2eKgLow,
        co2e_high * energy_share as x_CO2eKgHigh,
        sha256 as x_SourceFileSha256,
        row_number as x_SourceRow,
        charge_line as x_SourceLine
    from lines
)

select * from focus
