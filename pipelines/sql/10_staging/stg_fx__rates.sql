-- Exchange rates, any of the three layouts (sources/exchange_rates.py) -> exchange_rates.
-- Input: temp view raw_fx_rates (row_number, date_text, from_text, to_text, rate_text, source),
-- one line per rate (an ECB or H.10 row gives one per currency; a day without any rate, one
-- line without a rate: no_rate, counted by the reader, never a rate). date_text is a day
-- (YYYY-MM-DD) or a month (YYYY-MM: a rate for the whole month). A pair given twice for one day
-- in one file is rejected on both lines: nothing says which is right.
-- Grain: one row per rate.
with source as (
    select * from raw_fx_rates
),

typed as (
    select
        row_number,
        try_strptime(trim(date_text), '%Y-%m-%d')::date as rate_date,
        strftime(coalesce(try_strptime(trim(date_text), '%Y-%m-%d'), try_strptime(trim(date_text), '%Y-%m')), '%Y-%m')
            as rate_month,
        upper(trim(from_text)) as from_currency,
        upper(trim(to_text)) as to_currency,
        money(rate_text) as rate,
        nullif(trim(source), '') as source,
        date_text as _date, rate_text as _rate
    from source
),

checked as (
    select *,
        count(*) over (partition by rate_month, rate_date, from_currency, to_currency) as _same_pair
    from typed
)

select
    * exclude (_date, _rate, _same_pair),
    -- a day the publisher gave no rate at all (N/A, ND: a holiday) is a row read and counted,
    -- no rate to load; the day rule takes the latest published day before it
    to_currency is null and _rate is null as no_rate,
    errors([
        cast_err('rate', _rate, rate, 'decimal'),
        cast_err('date', _date, rate_month, 'date or month'),
        case when rate_month is null and coalesce(trim(_date), '') = '' then
            {'column_name': 'date', 'check_name': 'not_null', 'value': null,
             'message': 'a rate needs its day or month'} end,
        case when _same_pair > 1 then
            {'column_name': 'rate', 'check_name': 'unique_rate', 'value': from_currency || '->' || to_currency,
             'message': 'the same pair has several rates for this day in this file'} end
    ]) as _errors
from checked
