-- Grain: month x owner (a resource, a team, the month itself). The billing currency a figure
-- without its own currency is in, by what it is about: a resource's charges (its money lines;
-- one billing account each), else a team's only billing currency (null: billed in several),
-- else the month's reporting currency (owner_kind 'month'), with the reporting currency beside
-- each. Findings and what-if figures read it.
with resources as (
    select month, 'resource' as owner_kind, resource_id as owner, min(currency) as currency
    from allocation_lines
    where meter in ('billed_cost', 'effective_cost') and resource_id is not null
    group by all
),

teams as (
    select month, 'team' as owner_kind, team as owner, case when count(*) = 1 then min(currency) end as currency
    from team_currency_month
    group by all
),

months as (
    select month, pick(reporting_currency) as reporting_currency
    from team_currency_month
    group by all
),

owners as (
    select month, owner_kind, owner, currency from resources
    union all
    select month, owner_kind, owner, currency from teams
    union all
    select month, 'month' as owner_kind, month as owner, reporting_currency as currency from months
)

select o.month, o.owner_kind, o.owner, o.currency, m.reporting_currency
from owners o
join months m using (month)
