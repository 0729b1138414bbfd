-- Grain: rate day (null: a rate stated for the whole month) x month x from x to. The exchange
-- rates loaded, both ways: a pair stated one way (ECB: EUR -> USD) also converts back at 1 / rate
-- where no file states that direction for the same day. A pair no file states either way converts
-- at the cross rate through a base both are stated against on the same day (or month): the ECB
-- states EUR -> USD and EUR -> GBP, so GBP -> USD = (EUR -> USD) / (EUR -> GBP), its source
-- 'cross rate via EUR' with both rates' sources. Of one pair and day stated by several files,
-- the most recently loaded file's rate (a restated rate replaces the first one).
-- A month reads only rates of its own days (and, for the day rule, up to fx_lookback_days
-- before its first day): restating a later month's rates never moves an earlier month.
-- file_id: the file the rate was read from (a cross rate: its numerator's, via_file_id the
-- other leg's), so month_files lists and hashes the rate files a month's conversions read.
with loaded as (
    select r.rate_date, r.rate_month, r.from_currency, r.to_currency, r.rate, r.source, r.file_id
    from exchange_rates r
    join source_files f on f.file_id = r.file_id and f.status = 'loaded'
    where r.from_currency <> r.to_currency
    qualify row_number() over (partition by r.rate_month, r.rate_date, r.from_currency, r.to_currency
                               order by r.file_id desc) = 1
),

inverted as (
    select i.rate_date, i.rate_month, i.to_currency as from_currency, i.from_currency as to_currency,
        (1 / i.rate)::decimal(38, 12) as rate, i.source || ' (inverse)' as source, i.file_id
    from loaded i
    anti join loaded d on d.from_currency = i.to_currency and d.to_currency = i.from_currency
        and d.rate_month = i.rate_month and d.rate_date is not distinct from i.rate_date
),

stated as (
    select rate_date, rate_month, from_currency, to_currency, rate, source, file_id from loaded
    union all
    select rate_date, rate_month, from_currency, to_currency, rate, source, file_id from inverted
),

billed as (
    -- crosses only between currencies a bill is in or reported in (a full ECB history holds some
    -- 30 currencies a day: every pair of them would be some 900 rates a day)
    select distinct unit as currency from allocation_day where meter in ('billed_cost', 'effective_cost', 'list_cost')
    union
    select nullif(getvariable('reporting_currency'), '')
),

crossed as (
    -- one base per pair and day: the first by name, so the rate never depends on reading order
    select x.rate_date, x.rate_month, x.to_currency as from_currency, y.to_currency,
        (y.rate / x.rate)::decimal(38, 12) as rate,
        'cross rate via ' || x.from_currency || ' = ' || x.from_currency || ' -> ' || y.to_currency || ' (' || y.source
            || ') / ' || x.from_currency || ' -> ' || x.to_currency || ' (' || x.source || ')' as source,
        y.file_id, x.file_id as via_file_id
    from loaded x
    join loaded y on y.from_currency = x.from_currency and y.rate_month = x.rate_month
        and y.rate_date is not distinct from x.rate_date and y.to_currency <> x.to_currency
    semi join billed b1 on b1.currency = x.to_currency
    semi join billed b2 on b2.currency = y.to_currency
    anti join stated s on s.from_currency = x.to_currency and s.to_currency = y.to_currency
        and s.rate_month = x.rate_month and s.rate_date is not distinct from x.rate_date
    qualify row_number() over (partition by x.rate_month, x.rate_date, x.to_currency, y.to_currency
                               order by x.from_currency) = 1
)

select rate_date, rate_month, from_currency, to_currency, rate, source, file_id, null::integer as via_file_id from stated
union all
select rate_date, rate_month, from_currency, to_currency, rate, source, file_id, via_file_id from crossed
