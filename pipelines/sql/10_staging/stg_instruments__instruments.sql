-- Contractual instruments and supplier factors -> instruments. Input: temp view raw_instruments
-- with canonical names (instrument_id, type, zone, period_start, period_end, mwh, g_per_kwh,
-- source, year, notes) and _fields. Grain: one row per data row. Periods are dates, both ends
-- inclusive as people write them (2026-01-01 to 2026-12-31); stored as [start, end + 1 day). A
-- timestamp with a time of day is taken as it is, its end exclusive.
with source as (
    select * from raw_instruments
),

typed as (
    select
        row_number,
        nullif(trim(instrument_id), '') as instrument_id,
        -- RECs, GOs, I-RECs and PPAs as people spell them
        case regexp_replace(lower(trim(type)), '[^a-z]', '', 'g')
            when 'ppa' then 'ppa' when 'vppa' then 'vppa' when 'virtualppa' then 'vppa'
            when 'rec' then 'rec' when 'recs' then 'rec' when 'go' then 'go' when 'gos' then 'go'
            when 'guaranteeoforigin' then 'go' when 'irec' then 'i-rec' when 'eac' then 'eac'
            when 'greentariff' then 'green_tariff' when 'supplier' then 'supplier' when 'supplierfactor' then 'supplier'
        end as instrument_type,
        nullif(trim(zone), '') as zone,
        utc_ts(period_start) as period_start,
        case when regexp_full_match(trim(period_end), '\d{4}-\d{2}-\d{2}') then utc_ts(period_end) + interval 1 day
             else utc_ts(period_end) end as period_end,
        num(mwh) as volume_mwh,
        num(g_per_kwh) as g_per_kwh,
        nullif(trim(source), '') as source,
        try_cast(trim(year) as integer) as vintage_year,
        nullif(trim(notes), '') as notes,
        instrument_id as _id, type as _type, period_start as _start, period_end as _end, mwh as _mwh,
        g_per_kwh as _g, year as _year, _fields
    from source
)

select
    * exclude (_id, _type, _start, _end, _mwh, _g, _year, _fields),
    errors([
        case when instrument_id is null then {'column_name': 'instrument_id', 'check_name': 'not_nullable', 'value': null::varchar,
             'message': 'instrument_id is empty: give each certificate or contract its own id'} end,
        case when instrument_type is null then {'column_name': 'type', 'check_name': 'is_known_type', 'value': left(_type, 200),
             'message': 'type is not one of ppa, vppa, rec, go, i-rec, eac, green_tariff, supplier'} end,
        case when zone is null then {'column_name': 'zone', 'check_name': 'not_nullable', 'value': null::varchar,
             'message': 'zone is empty: name the region, grid zone or country the instrument is for'} end,
        cast_err('period_start', _start, period_start, 'timestamp'),
        cast_err('period_end', _end, period_end, 'timestamp'),
        case when period_end <= period_start then {'column_name': 'period_end', 'check_name': 'after_period_start',
             'value': _end, 'message': 'period_end is before period_start'} end,
        cast_err('mwh', _mwh, volume_mwh, 'number'),
        case when volume_mwh is null and coalesce(trim(_mwh), '') = '' and instrument_type not in ('supplier', 'green_tariff')
             then {'column_name': 'mwh', 'check_name': 'not_nullable', 'value': null::varchar,
                   'message': 'a certificate or contract needs its volume in MWh (only a supplier factor may leave it empty)'} end,
        cast_err('g_per_kwh', _g, g_per_kwh, 'number'),
        cast_err('year', _year, vintage_year, 'integer')
    ]) as _errors,
    errors([short_row_note(_fields)]) as _notes
from typed
