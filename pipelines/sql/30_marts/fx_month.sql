-- Grain: month x billing currency x rate (its day for the day rule; one row otherwise). The
-- exchange rates a month's chargeback used, with their sources, and, per billing currency, the
-- reconciliation into the reporting currency:
--   bill_billing      the bill allocated, in the billing currency (reconciled to its invoices
--                     in that currency by the reconciliation mart)
--   bill_reporting    what the teams were charged in the reporting currency (sums exactly)
--   bill_at_mean      bill_billing x the month's mean rate, to the minor unit: one rate for the
--                     whole bill, the usual treasury view
--   rounding_and_rate bill_reporting - bill_at_mean: what rounding and the rate rule moved
-- missing_day: the first charge day without a rate (null: none missing).
with applied as (
    select month, from_currency, reporting_currency, rate_rule, rate, rate_date, source,
        count(*) as charge_days, min(day) as first_day, max(day) as last_day
    from int_fx_applied
    group by all
),

missing as (
    select month, from_currency, min(coalesce(day, strptime(month || '-01', '%Y-%m-%d')::date)) as missing_day
    from int_fx_applied
    where rate is null
    group by all
),

bills as (
    select month, currency as from_currency, sum(billed_cost) as bill_billing,
        sum(billed_cost_reporting) as bill_reporting
    from team_currency_month
    group by all
),

means as (
    select rate_month as month, from_currency, to_currency,
        (sum(rate) / count(*))::decimal(38, 12) as mean_rate
    from int_fx_rates
    where rate_date is not null
    group by all
),

joined as (
    select a.*, m.missing_day, b.bill_billing, b.bill_reporting, u.places,
        case when a.from_currency = a.reporting_currency then 1::decimal(38, 12) else n.mean_rate end as mean_rate
    from applied a
    left join missing m on m.month = a.month and m.from_currency = a.from_currency
    left join bills b on b.month = a.month and b.from_currency = a.from_currency
    left join means n on n.month = a.month and n.from_currency = a.from_currency and n.to_currency = a.reporting_currency
    left join cfg_minor_units u on u.currency = a.reporting_currency
),

at_mean as (
    select *,
        case when from_currency = reporting_currency then bill_billing
             else round_units((bill_billing * mean_rate)::decimal(38, 12) * (10::hugeint ** places)::hugeint,
                              getvariable('fx_rounding'))
                  * (1 / (10::hugeint ** places)::hugeint)::decimal(38, 12) end as bill_at_mean
    from joined
)

select month, from_currency, reporting_currency, rate_rule, rate, rate_date, source, charge_days, first_day,
    last_day, missing_day, bill_billing, bill_reporting, mean_rate, bill_at_mean::decimal(38, 12) as bill_at_mean,
    (bill_reporting - bill_at_mean)::decimal(38, 12) as rounding_and_rate
from at_mean
