-- FOCUS (0.5 .. 1.4) -> charges. Input: temp table raw_focus with canonical column names
-- (the reader maps 0.5 / 1.0-preview spellings, and 1.3 ServiceProviderName over ProviderName)
-- and row_number. Grain: one row per data row.
-- FOCUS 1.3 split cost allocation: an allocated row (AllocatedMethodId set) repeats its origin
-- charge's dimensions and carries a share of its costs; the reader finds an origin charge the
-- file also has and keeps it out of charges, and reads the JSON of AllocatedMethodDetails and
-- ContractApplied when it loads them (sources/focus.py). No window here: the rows must stay in
-- file order, they are numbered by it.
with source as (
    select * from raw_focus
),

typed as (
    select
        row_number,
        ProviderName as provider,
        BillingAccountId as billing_account_id,
        SubAccountId as sub_account_id,
        utc_ts(BillingPeriodStart) as billing_period_start,
        utc_ts(ChargePeriodStart) as charge_period_start,
        utc_ts(ChargePeriodEnd) as charge_period_end,
        ChargeCategory as charge_category,
        ChargeClass as charge_class,
        ChargeDescription as charge_description,
        null::varchar as line_item_type,
        ServiceName as service_name,
        ServiceCategory as service_category,
        SkuId as sku_id,
        ResourceId as resource_id,
        instance_type_in(concat_ws(' ', x_UsageType, SkuPriceDetails, ChargeDescription, ResourceType)) as instance_type,
        RegionId as region,
        PricingCategory as pricing_category,
        CommitmentDiscountId as commitment_discount_id,
        num(ConsumedQuantity) as consumed_quantity,
        ConsumedUnit as consumed_unit,
        money(BilledCost) as billed_cost,
        coalesce(money(EffectiveCost), money(BilledCost)) as effective_cost,
        money(ListCost) as list_cost,
        upper(trim(BillingCurrency)) as billing_currency,
        nullif(trim(InvoiceId), '') as invoice_id,
        try_cast(json_text(Tags)::json as map(varchar, varchar)) as tags,
        -- every FOCUS 1.2 and x_ column as written, for `export focus` (charge_source_columns)
        _source_columns,
        -- FOCUS 1.3: the split a provider made, and the commitments a charge drew on
        AllocatedMethodId as _allocated_method_id,
        AllocatedMethodDetails as _allocated_method_details,
        AllocatedResourceId as _allocated_resource_id,
        AllocatedResourceName as _allocated_resource_name,
        try_cast(json_text(AllocatedTags)::json as map(varchar, varchar)) as _allocated_tags,
        ContractApplied as _contract_applied,
        SkuPriceId as _sku_price_id,
        -- raw text kept for the cast checks below
        BilledCost as _billed_cost, EffectiveCost as _effective_cost, ListCost as _list_cost,
        ChargePeriodStart as _cps, ChargePeriodEnd as _cpe, ConsumedQuantity as _cq, Tags as _tags,
        AllocatedTags as _atags, _fields
    from source
)

select
    * exclude (_billed_cost, _effective_cost, _list_cost, _cps, _cpe, _cq, _tags, _atags, _fields),
    errors([
        cast_err('BilledCost', _billed_cost, billed_cost, 'decimal'),
        cast_err('EffectiveCost', _effective_cost, money(_effective_cost), 'decimal'),
        cast_err('ListCost', _list_cost, list_cost, 'decimal'),
        cast_err('ChargePeriodStart', _cps, charge_period_start, 'timestamp'),
        cast_err('ChargePeriodEnd', _cpe, charge_period_end, 'timestamp'),
        cast_err('ConsumedQuantity', _cq, consumed_quantity, 'number')
    ]) as _errors,
    errors([short_row_note(_fields), tags_note('Tags', _tags, tags),
            tags_note('AllocatedTags', _atags, _allocated_tags),
            json_note('ContractApplied', _contract_applied),
            json_note('AllocatedMethodDetails', _allocated_method_details)]) as _notes
from typed
