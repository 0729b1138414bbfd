-- Grain: one row per money allocation line (allocation_lines: month x team x meter x rule x
-- source group; meters billed_cost, effective_cost, list_cost). Each line in the month's reporting
-- currency: its days' amounts (allocation_day) at int_fx_applied's rate of each day, then the
-- team's converted part of the bill (team_currency_month, per billing currency, meter and part
-- of the bill; list cost as a whole) split over the team's lines by largest remainder in whole minor units (ties by
-- resource, then source group). So per team, billing currency, meter and part, exactly:
-- sum(amount_reporting) = team_currency_month's figure, and any grouping of lines (a resource, a
-- day) adds up to the team. A line already in the reporting currency keeps its amount; null
-- where a rate is missing.
with lines as (
    select month, team, meter, rule, source_group, resource_id, currency,
        case when meter <> 'list_cost' then charge_part(rule) end as part, amount
    from allocation_lines
    where meter in ('billed_cost', 'effective_cost', 'list_cost')
),

days as (
    select a.month, a.team, a.meter, a.rule, a.source_group, sum((a.amount * f.rate)::decimal(38, 12)) as exact,
        bool_and(f.rate is not null) as rated
    from allocation_day a
    join int_fx_applied f on f.month = a.month and f.from_currency = a.unit and f.day is not distinct from a.day
    where a.meter in ('billed_cost', 'effective_cost', 'list_cost')
    group by all
),

team_parts as (
    select month, team, currency, reporting_currency,
        billed_cost_direct_reporting as billed_cost_direct, billed_cost_idle_reporting as billed_cost_idle,
        billed_cost_shared_reporting as billed_cost_shared, billed_cost_credits_reporting as billed_cost_credits,
        effective_cost_direct_reporting as effective_cost_direct, effective_cost_idle_reporting as effective_cost_idle,
        effective_cost_shared_reporting as effective_cost_shared,
        effective_cost_credits_reporting as effective_cost_credits, list_cost_reporting as list_cost
    from team_currency_month
),

targets as (
    unpivot team_parts
    on billed_cost_direct, billed_cost_idle, billed_cost_shared, billed_cost_credits, effective_cost_direct,
        effective_cost_idle, effective_cost_shared, effective_cost_credits, list_cost
    into name cell value target
),

cells as (
    select l.*, t.reporting_currency, t.target, u.places,
        coalesce(d.exact, 0) * (10::hugeint ** u.places)::hugeint as exact_units,
        floor(coalesce(d.exact, 0) * (10::hugeint ** u.places)::hugeint) as base_units
    from lines l
    left join days d using (month, team, meter, rule, source_group)
    left join targets t on t.month = l.month and t.team = l.team and t.currency = l.currency
        and t.cell = l.meter || coalesce('_' || l.part, '')
    left join cfg_minor_units u on u.currency = t.reporting_currency
),

ranked as (
    select *,
        sum(base_units) over g as base_sum,
        row_number() over (partition by month, team, currency, meter, part
                           order by exact_units - base_units desc, resource_id asc nulls last, source_group asc, rule asc) as rank_frac
    from cells
    window g as (partition by month, team, currency, meter, part)
)

select month, team, meter, rule, source_group, resource_id, part, currency, amount, reporting_currency,
    case when currency = reporting_currency then amount
         when target is not null then
        ((base_units + case when rank_frac <= target * (10::hugeint ** places)::hugeint - base_sum then 1 else 0 end)
         * (1 / (10::hugeint ** places)::hugeint)::decimal(38, 12))::decimal(38, 12) end as amount_reporting
from ranked
