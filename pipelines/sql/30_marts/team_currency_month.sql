-- Grain: month x team x billing currency. A team's money in the currency it was billed in and,
-- beside it, in the month's reporting currency (int_fx_applied: the rate of each charge day).
-- Each billing currency's month converts as one bill: the exact converted total (every day's
-- amount x its rate, to 12 places) rounded once to the reporting currency's minor unit
-- ([currency] rounding: half_even, or half_up = half away from zero), then split over the team
-- x part cells by largest remainder in whole minor units (ties by team, then part). So per
-- month, billing currency and meter, exactly: sum(*_reporting) = the converted bill; and per
-- team, billed_cost_reporting = its direct + idle + shared + credits parts, and
-- effective_cost_idle_reporting = idle_cost_reporting + unallocated_capacity_cost_reporting.
-- A bill already in the reporting currency keeps its exact amounts (team_month's).
-- Reporting figures are null where a rate is missing or no reporting currency is set.
with cells as (
    -- unallocated capacity (MIG slices no pod held, an owned cluster's GPU-hours no job held) a
    -- cell apart from idle time
    select a.month, a.team, a.unit as currency, a.meter,
        case when is_unallocated_capacity(a.rule) then 'capacity' else charge_part(a.rule) end as part, a.day, sum(a.amount) as amount
    from allocation_day a
    where a.meter in ('billed_cost', 'effective_cost', 'list_cost')
    group by all
),

converted as (
    select c.month, c.team, c.currency, c.meter, c.part, f.reporting_currency, f.rate_rule,
        sum(c.amount) as amount,
        sum((c.amount * f.rate)::decimal(38, 12)) as exact,
        bool_and(f.rate is not null and f.reporting_currency is not null) as rated
    from cells c
    join int_fx_applied f on f.month = c.month and f.from_currency = c.currency and f.day is not distinct from c.day
    group by all
),

units as (
    select v.*, u.places,
        v.exact * (10::hugeint ** u.places)::hugeint as exact_units,
        floor(v.exact * (10::hugeint ** u.places)::hugeint) as base_units,
        bool_and(v.rated) over g as group_rated,
        sum(v.exact * (10::hugeint ** u.places)::hugeint) over g as bill_units,
        sum(floor(v.exact * (10::hugeint ** u.places)::hugeint)) over g as base_sum
    from converted v
    left join cfg_minor_units u on u.currency = v.reporting_currency
    window g as (partition by v.month, v.currency, v.meter)
),

target as (
    select *,
        -- the converted bill in whole minor units, rounded once
        round_units(bill_units, getvariable('fx_rounding')) as bill_rounded,
        row_number() over (partition by month, currency, meter
                           order by exact_units - base_units desc, team asc, part asc) as rank_frac
    from units
),

split as (
    select *,
        -- a bill already in the reporting currency keeps its exact amounts (nothing is converted)
        case when currency = reporting_currency then amount
             when group_rated then
            ((base_units + case when rank_frac <= bill_rounded - base_sum then 1 else 0 end)
             * (1 / (10::hugeint ** places)::hugeint)::decimal(38, 12))::decimal(38, 12) end as amount_reporting
    from target
)

select
    month, team, currency, pick(reporting_currency) as reporting_currency, pick(rate_rule) as rate_rule,
    coalesce(sum(amount) filter (where meter = 'billed_cost'), 0) as billed_cost,
    coalesce(sum(amount) filter (where meter = 'effective_cost'), 0) as effective_cost,
    coalesce(sum(amount) filter (where meter = 'list_cost'), 0) as list_cost,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'billed_cost'), 0) end as billed_cost_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'effective_cost'), 0) end as effective_cost_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'list_cost'), 0) end as list_cost_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'billed_cost' and part = 'direct'), 0) end as billed_cost_direct_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'billed_cost' and part in ('idle', 'capacity')), 0) end as billed_cost_idle_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'billed_cost' and part = 'shared'), 0) end as billed_cost_shared_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'billed_cost' and part = 'credits'), 0) end as billed_cost_credits_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'direct'), 0) end as effective_cost_direct_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'effective_cost' and part in ('idle', 'capacity')), 0) end as effective_cost_idle_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'shared'), 0) end as effective_cost_shared_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'credits'), 0) end as effective_cost_credits_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'idle'), 0) end as idle_cost_reporting,
    case when bool_and(group_rated) then coalesce(sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'capacity'), 0) end as unallocated_capacity_cost_reporting,
    bool_and(group_rated) as rated
from split
group by month, team, currency
