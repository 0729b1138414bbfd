-- AWS Cost and Usage Report, legacy (lineItem/... or Athena snake_case) and CUR 2.0 -> charges.
-- Input: temp table raw_cur with canonical names and row_number; {{ tags }} is the map built
-- by the reader from the file's resourceTags/user:* columns. Grain: one row per line item.
with source as (
    select * from raw_cur
),

typed as (
    select
        row_number,
        'AWS' as provider,
        coalesce(payer_account_id, usage_account_id) as billing_account_id,
        usage_account_id as sub_account_id,
        utc_ts(billing_period_start) as billing_period_start,
        utc_ts(usage_start) as charge_period_start,
        utc_ts(usage_end) as charge_period_end,
        -- FOCUS categories for CUR line item types (FOCUS converters' mapping, Credit kept as Credit)
        case
            when line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation') then 'Usage'
            when line_item_type in ('RIFee', 'Fee', 'SavingsPlanUpfrontFee', 'SavingsPlanRecurringFee') then 'Purchase'
            when line_item_type = 'Tax' then 'Tax'
            when line_item_type in ('Credit', 'Refund', 'BundledDiscount', 'Discount', 'PrivateRateDiscount', 'EdpDiscount') then 'Credit'
        end as charge_category,
        case when line_item_type = 'Refund' then 'Correction' end as charge_class,
        description as charge_description,
        line_item_type,
        coalesce(product_name, product_code) as service_name,
        product_family as service_category,
        sku as sku_id,
        resource_id,
        -- a CASE, not coalesce: the usage-type regex runs only on lines without an instance type.
        -- A split row names its parent's instance: its GPU-hours are the parent line's, not its own.
        lower(case when nullif(trim(split_parent_resource_id), '') is not null then null
                   when trim(instance_type) <> '' then trim(instance_type)
                   else coalesce(try(json_extract_string(product_json, '$.instance_type')), instance_type_in(usage_type))
              end) as instance_type,
        coalesce(region_code, try(json_extract_string(product_json, '$.region_code')),
                 nullif(regexp_replace(availability_zone, '[a-z]$', ''), '')) as region,
        case
            when line_item_type in ('DiscountedUsage', 'SavingsPlanCoveredUsage') then 'Committed'
            when usage_type like '%SpotUsage%' then 'Dynamic'
            when line_item_type = 'Usage' then 'Standard'
        end as pricing_category,
        coalesce(savings_plan_arn, reservation_arn) as commitment_discount_id,
        num(usage_amount) as consumed_quantity,
        pricing_unit as consumed_unit,
        -- a pod row of split cost allocation data re-describes its node's line: its own line cost
        -- (AWS's data dictionary does not say it is always 0) is never counted, the node's is
        case when nullif(trim(split_parent_resource_id), '') is null then money(coalesce(net_unblended_cost, unblended_cost))
             else 0 end as billed_cost,
        -- Amortized cost per line item type (input-formats.md 1.2): commitments spread over the
        -- usage they cover, unused commitment kept visible on the fee line.
        case when nullif(trim(split_parent_resource_id), '') is not null then 0 else case line_item_type
            when 'SavingsPlanCoveredUsage' then money(sp_effective_cost)
            when 'SavingsPlanRecurringFee' then money(sp_total_commitment) - money(sp_used_commitment)
            when 'SavingsPlanNegation' then 0
            when 'SavingsPlanUpfrontFee' then 0
            when 'DiscountedUsage' then money(ri_effective_cost)
            when 'RIFee' then coalesce(money(ri_unused_upfront), 0) + coalesce(money(ri_unused_recurring), 0)
            when 'Fee' then case when reservation_arn is not null then 0 else money(unblended_cost) end
            else money(coalesce(net_unblended_cost, unblended_cost))
        end end as effective_cost,
        case when nullif(trim(split_parent_resource_id), '') is null then money(public_on_demand_cost) end as list_cost,
        upper(trim(coalesce(currency_code, 'USD'))) as billing_currency,
        nullif(trim(invoice_id), '') as invoice_id,   -- empty until AWS issues the month's invoice
        -- split cost allocation data: a pod's part of its parent instance's amortized cost, net of
        -- discounts where the export has them (as billed_cost)
        nullif(trim(split_parent_resource_id), '') as split_parent_id,
        money(coalesce(split_net_split_cost, split_cost)) as split_cost,
        money(coalesce(split_net_unused_cost, split_unused_cost)) as split_unused_cost,
        num(split_usage) as split_usage,
        num(split_usage_ratio) as split_usage_ratio,
        {{ tags }} as tags,
        -- a line item is identified by its id within its time interval (the id repeats hourly)
        line_item_id || '|' || coalesce(time_interval, usage_start, '') as line_item_key,
        coalesce(net_unblended_cost, unblended_cost) as _cost, usage_amount as _qty,
        usage_start as _start, usage_end as _end, resource_tags_json as _tags, _fields,
        coalesce(split_net_split_cost, split_cost) as _split, coalesce(split_net_unused_cost, split_unused_cost) as _unused
    from source
)

select
    * exclude (_cost, _qty, _start, _end, _tags, _fields, _split, _unused),
    errors([
        cast_err('lineItem/UnblendedCost', _cost, money(_cost), 'decimal'),
        cast_err('lineItem/UsageAmount', _qty, consumed_quantity, 'number'),
        cast_err('lineItem/UsageStartDate', _start, charge_period_start, 'timestamp'),
        cast_err('lineItem/UsageEndDate', _end, charge_period_end, 'timestamp'),
        cast_err('splitLineItem/SplitCost', _split, split_cost, 'decimal'),
        cast_err('splitLineItem/UnusedCost', _unused, split_unused_cost, 'decimal'),
        -- a split row without its split costs describes nothing
        case when split_parent_id is not null and (split_cost is null or split_cost < 0 or split_unused_cost < 0) then
            {'column_name': 'splitLineItem/SplitCost', 'check_name': 'split_costs_present',
             'value': coalesce(_split, '') || ' / ' || coalesce(_unused, ''),
             'message': 'a split cost allocation row needs SplitCost, and neither it nor UnusedCost may be negative'} end,
        case when charge_category is null then
            {'column_name': 'lineItem/LineItemType', 'check_name': 'known_line_item_type', 'value': line_item_type,
             'message': 'unknown line item type; add it to stg_aws_cur__charges.sql'} end
    ]) as _errors,
    errors([short_row_note(_fields), tags_note('resource_tags', _tags, tags),
        -- the row loads; the cost it shows is the node line's, counted there
        case when split_parent_id is not null and money(_cost) <> 0 then
            {'column_name': 'lineItem/UnblendedCost', 'check_name': 'split_row_line_cost_not_counted', 'value': _cost,
             'message': 'a split cost allocation row shows a line cost of its own; the parent line holds the cost, so it is not counted again'} end
    ]) as _notes
from typed
