-- Grain: month x day x team x billing currency (day = UTC date a charge period starts). Billed
-- and effective cost and billed GPU-hours per team and day, for the chargeback's daily charts:
-- the money as billed and, beside it, in the month's reporting currency (*_reporting: each
-- line's int_fx_lines amount, spread the same way). A charge group's hours go with its money's
-- currency. Each allocation line of a
-- charge source group is spread over the days of that group's own charges, in proportion to the
-- group's amount of the same meter per day (by its line count where a meter nets to zero), so a
-- team's days add up to its team_month figure (to float precision: the days are DOUBLE, the
-- month exact). A monthly fee falls on the day its charge period starts.
with group_days as (
    select source_group, charge_period_start::date as day, count(*)::double as lines,
        sum(billed_cost)::double as billed_cost, sum(effective_cost)::double as effective_cost,
        sum(gpu_hours)::double as gpu_hours
    from int_charges_teams
    group by all
),

profile as (
    unpivot group_days
    on billed_cost, effective_cost, gpu_hours
    into name meter value amount
),

weights as (
    select source_group, day, meter,
        case when sum(amount) over g <> 0 then amount / sum(amount) over g
             else lines / sum(lines) over g end as weight
    from profile
    window g as (partition by source_group, meter)
),

group_currency as (
    select month, source_group, min(currency) as currency
    from allocation_lines
    where meter in ('billed_cost', 'effective_cost')
    group by all
),

spread as (
    select l.month, w.day, l.team, g.currency, l.meter, l.amount::double * w.weight as amount,
        x.amount_reporting::double * w.weight as amount_reporting, x.reporting_currency, x.rule is not null as money
    from allocation_lines l
    join weights w on w.source_group = l.source_group and w.meter = l.meter
    left join group_currency g on g.month = l.month and g.source_group = l.source_group
    left join int_fx_lines x on x.month = l.month and x.team = l.team and x.meter = l.meter and x.rule = l.rule
        and x.source_group = l.source_group
)

select
    month,
    day,
    team,
    currency,
    coalesce(sum(amount) filter (where meter = 'billed_cost'), 0) as billed_cost,
    coalesce(sum(amount) filter (where meter = 'effective_cost'), 0) as effective_cost,
    coalesce(sum(amount) filter (where meter = 'gpu_hours'), 0) as gpu_hours,
    pick(reporting_currency) as reporting_currency,
    case when bool_and(amount_reporting is not null or not money) then
        coalesce(sum(amount_reporting) filter (where meter = 'billed_cost'), 0) end as billed_cost_reporting,
    case when bool_and(amount_reporting is not null or not money) then
        coalesce(sum(amount_reporting) filter (where meter = 'effective_cost'), 0) end as effective_cost_reporting
from spread
group by month, day, team, currency
