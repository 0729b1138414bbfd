-- Grain: month x billing currency x charge day (null: money lines without a day). The rate each
-- day's charges convert at into the month's reporting currency ([currency] reporting, else the
-- month's only billing currency; null where the month has several and none is configured):
--   day            the latest rate of a day on or before the charge's, within fx_lookback_days
--                  (a weekend charge takes Friday's rate); a line without a day: month_average
--   month_average  a rate stated for the month, else the mean of the month's daily rates
--   budget         [currency.budget_rates]
-- A billing currency equal to the reporting one converts at 1. rate null: no rate, which the
-- chargeback reports as one error naming the currency and the day.
with days as (
    select distinct month, unit as from_currency, day
    from allocation_day
    where meter in ('billed_cost', 'effective_cost', 'list_cost')
),

reporting as (
    select month,
        coalesce(nullif(getvariable('reporting_currency'), ''),
                 case when count(distinct from_currency) = 1 then min(from_currency) end) as reporting_currency
    from days
    group by month
),

wanted as (
    select d.month, d.from_currency, d.day, r.reporting_currency
    from days d
    join reporting r using (month)
),

day_rates as (
    select w.month, w.from_currency, w.day, x.rate, x.rate_date, x.source
    from wanted w
    join int_fx_rates x on x.from_currency = w.from_currency and x.to_currency = w.reporting_currency
        and x.rate_date <= w.day and date_diff('day', x.rate_date, w.day) < getvariable('fx_lookback_days')
    qualify row_number() over (partition by w.month, w.from_currency, w.day order by x.rate_date desc) = 1
),

month_rates as (
    -- a rate stated for the month wins over the mean of its days; the mean is exact in DECIMAL
    -- up to its one division, kept to 12 places
    select rate_month as month, from_currency, to_currency,
        coalesce(max(rate) filter (where rate_date is null),
                 (sum(rate) filter (where rate_date is not null) / count(rate_date))::decimal(38, 12)) as rate,
        coalesce(max(source) filter (where rate_date is null),
                 'mean of ' || count(rate_date) || ' daily rates, ' || string_agg(distinct source, '; ' order by source)) as source
    from int_fx_rates
    group by all
)

select
    w.month, w.from_currency, w.reporting_currency, w.day,
    getvariable('rate_rule') as rate_rule,
    case when w.from_currency = w.reporting_currency then 1::decimal(38, 12)
         when getvariable('rate_rule') = 'budget' then b.rate
         when getvariable('rate_rule') = 'day' and w.day is not null then d.rate
         else m.rate end as rate,
    case when w.from_currency <> w.reporting_currency and getvariable('rate_rule') = 'day' then d.rate_date end as rate_date,
    case when w.from_currency = w.reporting_currency then 'same currency'
         when getvariable('rate_rule') = 'budget' then getvariable('budget_rate_source')
         when getvariable('rate_rule') = 'day' and w.day is not null then d.source
         else m.source end as source
from wanted w
left join day_rates d on d.month = w.month and d.from_currency = w.from_currency and d.day = w.day
left join month_rates m on m.month = w.month and m.from_currency = w.from_currency and m.to_currency = w.reporting_currency
left join cfg_budget_rates b on b.from_currency = w.from_currency
