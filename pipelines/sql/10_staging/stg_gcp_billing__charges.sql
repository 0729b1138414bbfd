-- Google Cloud Billing export (standard or detailed; JSON lines or Parquet as BigQuery exports
-- them, or CSV with dotted names) -> charges. Input: temp table raw_gcp with canonical names;
-- labels and credits arrive as JSON text. `cost` is before credits: each credit becomes its own
-- Credit line (charge_line 1..n) on the same source row, never netted or clamped away.
-- invoice.month (YYYYMM) is the billing period, as Google invoices it. Grain: source row x line.
-- Labels and credits may be Python literals instead of JSON (a pandas-written CSV); both parse.
-- Labels that parse neither way leave the row's cost in, without tags (a located note); credits
-- carry amounts, so credits that do not parse reject the row.
with source as (
    select * from raw_gcp
),

parsed as (
    select
        *,
        try(from_json(json_text(labels), '[{"key": "VARCHAR", "value": "VARCHAR"}]')) as label_list,
        try(from_json(json_text(credits), '[{"name": "VARCHAR", "amount": "VARCHAR", "type": "VARCHAR", "id": "VARCHAR", "full_name": "VARCHAR"}]')) as credit_list,
        -- GPUs billed as their own SKU: "Nvidia Tesla A100 GPU running in Americas" -> gpu:nvidia-tesla-a100
        nullif(regexp_extract(lower(sku_description), '(nvidia (?:tesla )?[a-z0-9]+(?: mega)?(?: [0-9]+gb)?) gpu', 1), '') as gpu_sku
    from source
),

credit_rows as (
    select row_number, unnest(credit_list) as credit, generate_subscripts(credit_list, 1) as charge_line
    from parsed
    where len(credit_list) > 0
),

lines as (
    select
        p.row_number,
        0 as charge_line,
        case lower(p.cost_type)
            when 'tax' then 'Tax' when 'adjustment' then 'Adjustment' when 'rounding_error' then 'Adjustment'
            when 'credit' then 'Credit' else 'Usage' end as charge_category,
        case when lower(p.cost_type) = 'adjustment' then 'Correction' end as charge_class,
        p.sku_description as charge_description,
        p.cost as cost_text,
        money(p.cost_at_list) as list_cost,
        p.* exclude (row_number)
    from parsed p
    union all
    select
        p.row_number,
        c.charge_line,
        'Credit',
        null,
        coalesce(c.credit.full_name, c.credit.name, c.credit.type),
        c.credit.amount,
        money('0'),
        p.* exclude (row_number)
    from credit_rows c
    join parsed p using (row_number)
),

typed as (
    select
        row_number,
        charge_line,
        'Google Cloud' as provider,
        billing_account_id,
        project_id as sub_account_id,
        try_strptime(invoice_month || '01', '%Y%m%d') as billing_period_start,
        utc_ts(usage_start) as charge_period_start,
        utc_ts(usage_end) as charge_period_end,
        charge_category,
        charge_class,
        charge_description,
        cost_type as line_item_type,
        service_description as service_name,
        null::varchar as service_category,
        sku_id,
        resource_name as resource_id,
        case when charge_line = 0 then coalesce('gpu:' || replace(gpu_sku, ' ', '-'), instance_type_in(sku_description)) end as instance_type,
        coalesce(region, location) as region,
        null::varchar as pricing_category,
        null::varchar as commitment_discount_id,
        case when charge_line > 0 then null
             when lower(pricing_unit) = 'hour' then num(amount_in_pricing_units)
             when lower(usage_unit) = 'seconds' then num(usage_amount) / s_per_h()
             else num(usage_amount) end as consumed_quantity,
        case when charge_line > 0 then null
             when lower(pricing_unit) = 'hour' or lower(usage_unit) = 'seconds' then 'Hours'
             else usage_unit end as consumed_unit,
        money(cost_text) as billed_cost,
        money(cost_text) as effective_cost,
        list_cost,
        upper(trim(currency)) as billing_currency,
        -- no invoice number in the export: Google invoices a billing account per invoice month
        case when nullif(trim(invoice_month), '') is not null then billing_account_id || '/' || trim(invoice_month) end as invoice_id,
        map_from_entries(list_transform(label_list, lambda e: struct_pack(k := e.key, v := e.value))) as tags,
        cost_text as _cost, usage_start as _start, labels as _labels, label_list as _label_list,
        credits as _credits, credit_list as _credit_list, _fields
    from lines
)

select
    * exclude (_cost, _start, _labels, _label_list, _credits, _credit_list, _fields),
    errors([
        cast_err(case when charge_line = 0 then 'cost' else 'credits.amount' end, _cost, billed_cost, 'decimal'),
        cast_err('usage_start_time', _start, charge_period_start, 'timestamp'),
        case when charge_line = 0 and _credits is not null and _credits not in ('', '[]') and _credit_list is null then
            {'column_name': 'credits', 'check_name': 'parses_as_credit_array', 'value': left(_credits, 200),
             'message': 'credits is neither a JSON array nor a Python list of {name, amount, ...}'} end
    ]) as _errors,
    errors([
        case when charge_line = 0 then short_row_note(_fields) end,
        case when charge_line = 0 and _labels is not null and _labels not in ('', '[]') and _label_list is null then
            {'column_name': 'labels', 'check_name': 'labels_not_parsed', 'value': left(_labels, 200),
             'message': 'labels is neither a JSON array nor a Python list of {key, value}; the row is loaded without tags'} end
    ]) as _notes
from typed
