-- Grain: one row per month, currency and source file: what the bill says (sum of billed cost
-- over every loaded line item) next to what the chargeback allocates. Differences must be 0.
with invoice as (
    select month, billing_currency as currency, file_id,
        sum(billed_cost) as billed_cost, sum(effective_cost) as effective_cost, count(*) as rows
    from int_charges_teams
    group by all
),

allocated as (
    select month, currency, sum(billed_cost) as billed_cost, sum(effective_cost) as effective_cost
    from team_month where currency is not null
    group by all
)

select
    i.month, i.currency, i.file_id, f.path, f.sha256, f.kind, i.rows,
    i.billed_cost, i.effective_cost,
    sum(i.billed_cost) over (partition by i.month, i.currency) as invoice_billed_cost,
    a.billed_cost as allocated_billed_cost,
    a.billed_cost - sum(i.billed_cost) over (partition by i.month, i.currency) as difference
from invoice i
join source_files f using (file_id)
left join allocated a on a.month = i.month and a.currency = i.currency
