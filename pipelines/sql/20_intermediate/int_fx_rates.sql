-- Grain: rate day (null: a rate stated for the whole month) x month x from x to. The exchange
-- rates loaded, both ways: a pair stated one way (ECB: EUR -> USD) also converts back at 1 / rate
-- where no file states that direction for the same day. Of one pair and day stated by several
-- files, the most recently loaded file's rate (a restated rate replaces the first one).
-- A month reads only rates of its own days (and, for the day rule, up to fx_lookback_days
-- before its first day): restating a later month's rates never moves an earlier month.
with loaded as (
    select r.rate_date, r.rate_month, r.from_currency, r.to_currency, r.rate, r.source
    from exchange_rates r
    join source_files f on f.file_id = r.file_id and f.status = 'loaded'
    where r.from_currency <> r.to_currency
    qualify row_number() over (partition by r.rate_month, r.rate_date, r.from_currency, r.to_currency
                               order by r.file_id desc) = 1
),

inverted as (
    select i.rate_date, i.rate_month, i.to_currency as from_currency, i.from_currency as to_currency,
        (1 / i.rate)::decimal(38, 12) as rate, i.source || ' (inverse)' as source
    from loaded i
    anti join loaded d on d.from_currency = i.to_currency and d.to_currency = i.from_currency
        and d.rate_month = i.rate_month and d.rate_date is not distinct from i.rate_date
)

select rate_date, rate_month, from_currency, to_currency, rate, source from loaded
union all
select rate_date, rate_month, from_currency, to_currency, rate, source from inverted
