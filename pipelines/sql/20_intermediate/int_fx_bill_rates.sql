-- Grain: month x billing currency. The rate a figure without a charge day (a finding's money
-- at stake, a what-if saving) converts at: the month's converted bill over its bill in that
-- currency (team_currency_month, billed cost), so such a figure moves exactly as the bill it
-- comes from did under the rate rule (day: the bill's day-weighted rate; month_average and
-- budget: the one rate). 1 for the reporting currency itself; null where the bill is zero or a
-- rate is missing.
select month, currency, pick(reporting_currency) as reporting_currency,
    case when currency = pick(reporting_currency) then 1::decimal(38, 12)
         when bool_and(rated) then (sum(billed_cost_reporting) / nullif(sum(billed_cost), 0))::decimal(38, 12) end as rate
from team_currency_month
group by month, currency
