-- Exchange rates as loaded (kinds exchange_rates, ecb_eurofxref, frb_h10): one row per rate a
-- file states. rate = units of to_currency one unit of from_currency buys, for the day
-- rate_date, or for the whole month rate_month where rate_date is null (a stated monthly or
-- budget rate). A later file's rate for the same day (or month) and pair replaces an earlier
-- one's for months not yet closed; int_fx_rates.sql decides.
create table if not exists exchange_rates (
    file_id        integer not null,
    row_number     bigint not null,
    rate_date      date,                       -- null: a rate for the whole month
    rate_month     varchar not null,           -- YYYY-MM
    from_currency  varchar not null,           -- ISO 4217
    to_currency    varchar not null,
    rate           decimal(38, 12) not null,   -- to_currency per one from_currency, above 0
    source         varchar not null            -- who published it (ECB, Federal Reserve H.10, treasury)
);
