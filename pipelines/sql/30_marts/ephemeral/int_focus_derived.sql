-- Grain: charges line (int_focus_lines). What FOCUS says each column holds, derived from the
-- normalized charge: focus_export uses it where the input has no such column (a FOCUS input's
-- own columns win). Charge frequency, commitment discount category, status, type and unit, the
-- service category (the input's if FOCUS names it, else from the service name), pricing
-- quantity and the quantity unit prices divide by. Ephemeral: inlined into its readers.
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
from int_focus_lines
