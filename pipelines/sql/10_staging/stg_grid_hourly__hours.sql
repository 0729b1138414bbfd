-- Hourly grid carbon intensity -> grid_hours. Input: temp view raw_grid with canonical names:
-- zone, hour, direct and lifecycle (Electricity Maps' two intensity columns), value and basis (a
-- plain file's gco2_per_kwh and basis), carbon_free_pct, renewable_pct, data_source, estimated,
-- estimation_method, _fields. {{ hour_column }} and {{ value_column }} are the file's own header
-- names, as SQL literals, for the rejects. Grain: one line per figure of a data row (an
-- Electricity Maps row has two: direct and life-cycle); a row with no figure keeps one line to
-- carry its errors. Timestamps are UTC (Electricity Maps' "Datetime (UTC)" is the hour's start).
with source as (
    select * from raw_grid
),

typed as (
    select
        row_number,
        nullif(trim(zone), '') as zone,
        utc_ts(hour) as hour_start,
        num(direct) as direct,
        num(lifecycle) as lifecycle,
        num(value) as value,
        -- a plain file's basis column: combustion-only (direct) or life-cycle factors
        case when basis is null or trim(basis) = '' then 'unspecified'
             when regexp_replace(lower(basis), '[^a-z]', '', 'g') in ('direct', 'combustion', 'operational') then 'direct'
             when regexp_replace(lower(basis), '[^a-z]', '', 'g') in ('lifecycle', 'lca', 'lifecycleassessment') then 'lifecycle'
        end as basis_type,
        num(carbon_free_pct) as carbon_free_pct,
        num(renewable_pct) as renewable_pct,
        nullif(trim(data_source), '') as data_source,
        case lower(trim(estimated)) when 'true' then true when 'false' then false end as estimated,
        nullif(trim(estimation_method), '') as estimation_method,
        zone as _zone, hour as _hour, direct as _direct, lifecycle as _lifecycle, value as _value, basis as _basis,
        carbon_free_pct as _cfe, renewable_pct as _re, _fields
    from source
),

checked as (
    select *,
        errors([
            case when zone is null then {'column_name': 'zone', 'check_name': 'not_nullable', 'value': _zone,
                                         'message': 'zone is empty: name the grid zone each row is for'} end,
            case when _hour is null or trim(_hour) = '' then {'column_name': {{ hour_column }}, 'check_name': 'not_nullable',
                 'value': null::varchar, 'message': 'the hour is empty'} end,
            cast_err({{ hour_column }}, _hour, hour_start, 'timestamp'),
            cast_err('Carbon intensity (direct)', _direct, direct, 'number'),
            cast_err('Carbon intensity (life cycle)', _lifecycle, lifecycle, 'number'),
            cast_err({{ value_column }}, _value, value, 'number'),
            case when basis_type is null then {'column_name': 'basis', 'check_name': 'is_known_basis', 'value': left(_basis, 200),
                 'message': 'basis is neither direct nor lifecycle'} end,
            case when coalesce(direct, lifecycle, value) is null
                      and coalesce(trim(_direct), '') = '' and coalesce(trim(_lifecycle), '') = '' and coalesce(trim(_value), '') = ''
                 then {'column_name': {{ value_column }}, 'check_name': 'not_nullable', 'value': null::varchar,
                       'message': 'the row gives no carbon intensity'} end
        ]) as _row_errors,
        errors([
            cast_err('carbon-free percentage', _cfe, carbon_free_pct, 'number'),
            cast_err('renewable percentage', _re, renewable_pct, 'number'),
            short_row_note(_fields)
        ]) as _row_notes
    from typed
),

lines as (
    select *, 'direct' as factor_type, direct as intensity_g_per_kwh, 1 as ord from checked where direct is not null
    union all
    select *, 'lifecycle', lifecycle, 2 from checked where lifecycle is not null
    union all
    select *, coalesce(basis_type, 'unspecified'), value, 3 from checked where value is not null
    union all
    select *, 'unspecified', null::double, 0 from checked where coalesce(direct, lifecycle, value) is null
),

numbered as (
    -- a row's errors and notes travel on its first line only (one reject per problem, not per line)
    select *, row_number() over (partition by row_number order by ord) as k from lines
)

select
    row_number, zone, hour_start, factor_type, intensity_g_per_kwh, carbon_free_pct, renewable_pct,
    data_source, estimated, estimation_method,
    case when k = 1 then _row_errors else [] end as _errors,
    case when k = 1 then _row_notes else [] end as _notes
from numbered
