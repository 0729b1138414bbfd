-- Azure Cost Management cost details (EA and MCA, actual or amortized) -> charges.
-- Input: temp table raw_azure with canonical names (the reader maps Cost/CostInBillingCurrency,
-- BillingCurrency/BillingCurrencyCode, ...). Dates are M/D/YYYY or ISO; Tags is JSON without its
-- outer braces; the VM size is in AdditionalInfo.ServiceType. Grain: one row per data row.
with source as (
    select * from raw_azure
),

parsed as (
    select
        *,
        tags as source_tags,
        coalesce(try_strptime(trim(usage_date), '%m/%d/%Y'), utc_ts(usage_date)) as day_start,
        coalesce(try_strptime(trim(period_start), '%m/%d/%Y'), utc_ts(period_start)) as period_start_ts,
        -- "10 Hours" is a block of ten: quantity x block size is the consumed amount
        try_cast(nullif(regexp_extract(unit_of_measure, '^\s*([0-9]+)', 1), '') as double) as block_size,
        lower(trim(regexp_replace(unit_of_measure, '^\s*[0-9]*\s*/?', ''))) as block_unit,
        json_text(case when trim(tags) = '' then null
                       when starts_with(trim(tags), '{') then tags
                       else '{' || tags || '}' end) as tags_json,
        try(json_extract_string(additional_info, '$.ServiceType')) as vm_size
    from source
),

typed as (
    select
        row_number,
        'Microsoft' as provider,
        billing_account_id,
        subscription_id as sub_account_id,
        period_start_ts as billing_period_start,
        day_start as charge_period_start,
        day_start + interval 1 day as charge_period_end,
        case lower(charge_type)
            when 'usage' then 'Usage'
            when 'unusedreservation' then 'Usage'
            when 'unusedsavingsplan' then 'Usage'
            when 'purchase' then 'Purchase'
            when 'refund' then 'Credit'
            when 'tax' then 'Tax'
            when 'adjustment' then 'Adjustment'
            when 'roundingadjustment' then 'Adjustment'
        end as charge_category,
        case when lower(charge_type) = 'refund' then 'Correction' end as charge_class,
        concat_ws(' - ', meter_category, meter_subcategory, meter_name) as charge_description,
        charge_type as line_item_type,
        coalesce(meter_category, consumed_service) as service_name,
        service_family as service_category,
        meter_id as sku_id,
        resource_id,
        lower(coalesce(vm_size, instance_type_in(product))) as instance_type,
        lower(resource_location) as region,
        case lower(pricing_model)
            when 'reservation' then 'Committed' when 'savingsplan' then 'Committed'
            when 'spot' then 'Dynamic' when 'ondemand' then 'Standard'
        end as pricing_category,
        coalesce(nullif(benefit_id, ''), nullif(reservation_id, '')) as commitment_discount_id,
        case when starts_with(block_unit, 'hour') then num(quantity) * coalesce(block_size, 1) else num(quantity) end as consumed_quantity,
        case when starts_with(block_unit, 'hour') then 'Hours' else unit_of_measure end as consumed_unit,
        money(cost) as billed_cost,
        -- one cost basis per export (actual or amortized), as the export was chosen
        money(cost) as effective_cost,
        money(paygo_price) * money(quantity) as list_cost,
        upper(trim(currency)) as billing_currency,
        nullif(trim(invoice_id), '') as invoice_id,
        try_cast(tags_json::json as map(varchar, varchar)) as tags,
        cost as _cost, usage_date as _date, quantity as _qty, source_tags as _tags, _fields
    from parsed
)

select
    * exclude (_cost, _date, _qty, _tags, _fields),
    errors([
        cast_err({{ cost_column }}, _cost, billed_cost, 'decimal'),
        cast_err({{ date_column }}, _date, charge_period_start, 'date'),
        cast_err({{ quantity_column }}, _qty, consumed_quantity, 'number'),
        case when charge_category is null then
            {'column_name': {{ charge_type_column }}, 'check_name': 'known_charge_type', 'value': line_item_type,
             'message': 'unknown Azure ChargeType; add it to stg_azure_cost__charges.sql'} end
    ]) as _errors,
    errors([short_row_note(_fields), tags_note('Tags', _tags, tags)]) as _notes
from typed
