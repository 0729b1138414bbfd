-- Oracle Cloud Infrastructure cost reports -> charges. Input: temp table raw_oci with canonical
-- names and {{ tags }}, the map of the report's tags/* columns. Timestamps mix precisions
-- (2023-11-13T10:00Z next to 2023-11-13T11:00:00Z); both parse. Grain: one row per line.
with source as (
    select * from raw_oci
),

typed as (
    select
        row_number,
        'Oracle' as provider,
        tenant_id as billing_account_id,
        compartment_id as sub_account_id,
        date_trunc('month', utc_ts(interval_start)) as billing_period_start,
        utc_ts(interval_start) as charge_period_start,
        utc_ts(interval_end) as charge_period_end,
        case when lower(is_correction) = 'true' then 'Adjustment' else 'Usage' end as charge_category,
        case when lower(is_correction) = 'true' then 'Correction' end as charge_class,
        description as charge_description,
        null::varchar as line_item_type,
        service as service_name,
        null::varchar as service_category,
        product_sku as sku_id,
        resource_id,
        instance_type_in(description) as instance_type,
        region,
        null::varchar as pricing_category,
        subscription_id as commitment_discount_id,
        num(billed_quantity) as consumed_quantity,
        unit as consumed_unit,
        money(my_cost) as billed_cost,
        money(my_cost) as effective_cost,
        null::decimal(38, 12) as list_cost,
        upper(trim(currency)) as billing_currency,
        {{ tags }} as tags,
        my_cost as _cost, interval_start as _start, billed_quantity as _qty, _fields
    from source
)

select
    * exclude (_cost, _start, _qty, _fields),
    errors([
        cast_err('cost/myCost', _cost, billed_cost, 'decimal'),
        cast_err('lineItem/intervalUsageStart', _start, charge_period_start, 'timestamp'),
        cast_err('usage/billedQuantity', _qty, consumed_quantity, 'number')
    ]) as _errors,
    errors([short_row_note(_fields)]) as _notes
from typed
