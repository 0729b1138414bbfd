-- Grain: allocation_day's rows (one per allocation line x detail), for `meterbook export
-- allocation`: each row as allocation_day has it and, for money (billed, effective and list
-- cost), beside it in the month's reporting currency. A money line's converted amount
-- (int_fx_lines) is split over its details by largest remainder in whole minor units, by each
-- detail's amount at its day's rate (int_fx_applied); so per line, exactly,
-- sum(amount_reporting) = int_fx_lines.amount_reporting, and per team = team_month_reporting.
-- Money already in the reporting currency keeps its amount; other meters: null.

-- the lines split by rank: money in another currency than the month's reporting one. Whole
-- lines: a line's unit is its currency, and each of its rows has its day's int_fx_applied row
-- (a rate or none). Only these are sorted; the rest are read once more below, unsorted.
with rated as (
    select a.*, f.reporting_currency, f.rate, u.places,
        (a.amount * f.rate)::decimal(38, 12) * (10::hugeint ** u.places)::hugeint as exact_units
    from allocation_day a
    join int_fx_applied f on f.month = a.month and f.from_currency = a.unit and f.day is not distinct from a.day
        and a.meter in ('billed_cost', 'effective_cost', 'list_cost') and f.from_currency is distinct from f.reporting_currency
    left join cfg_minor_units u on u.currency = f.reporting_currency
),

ranked as (
    select r.*, x.amount_reporting as line_reporting,
        sum(floor(r.exact_units)) over line as base_sum,
        row_number() over (partition by r.month, r.team, r.meter, r.rule, r.source_group
                           order by r.exact_units - floor(r.exact_units) desc, r.day asc, r.source_sha256 asc, r.source_row asc,
                                    r.source_line asc, r.resource_id asc, r.namespace asc, r.workload asc, r.sharing_mode asc,
                                    r.split_rule asc) as rank_frac
    from rated r
    left join int_fx_lines x on x.month = r.month and x.team = r.team and x.meter = r.meter and x.rule = r.rule
        and x.source_group = r.source_group
    window line as (partition by r.month, r.team, r.meter, r.rule, r.source_group)
),

lines as (
    select * from ranked
    union all by name
    -- every other row: money in the reporting currency (rate 1) and the other meters (no rate)
    select a.*, f.reporting_currency, f.rate
    from allocation_day a
    left join int_fx_applied f on f.month = a.month and f.from_currency = a.unit and f.day is not distinct from a.day
        and a.meter in ('billed_cost', 'effective_cost', 'list_cost')
    where f.from_currency is not distinct from f.reporting_currency
)

select * exclude (rate, places, exact_units, line_reporting, base_sum, rank_frac),
    case when rate is null then null
         when unit = reporting_currency then amount
         when line_reporting is not null then
        ((floor(exact_units) + case when rank_frac <= line_reporting * (10::hugeint ** places)::hugeint - base_sum then 1 else 0 end)
         * (1 / (10::hugeint ** places)::hugeint)::decimal(38, 12))::decimal(38, 12) end as amount_reporting
from lines
