-- Locate a telemetry file's rejected samples (run only when its groups counted some): the same
-- tests as stg_telemetry__groups and stg_dcgm__tel, sample by sample, with row numbers; each
-- rejected sample under the first test it fails, so one sample is one reject.
-- Input: {{ samples }}(row_number, series, value_text, ts_ms, line, implausible, limit_text):
-- the numbered samples, with the plausibility check a reading failed (sources/telemetry.py;
-- null when none did) and what its limit was. {{ ts_min_ms }} / {{ ts_max_ms }}: as in
-- stg_telemetry__groups.
with parsed as (
    select
        *,
        split_part(series, '{', 1) as metric,
        case when strpos(series, '{') > 0 then substr(series, strpos(series, '{') + 1) else '' end as labels
    from {{ samples }}
),

checked as (
    select
        row_number,
        coalesce(metric, '') as metric,
        line,
        value_text,
        try_cast(value_text as double) as v,
        ts_ms,
        implausible,
        limit_text,
        gpu_identity(labels) is null and not is_request_metric(metric) as no_gpu,
        coalesce(regexp_full_match(metric, '[a-zA-Z_:][a-zA-Z0-9_:]*'), false) as good_name
    from parsed
),

failed as (
    select
        *,
        case when v is null or ts_ms is null or not good_name then 'sample_syntax'
             when no_gpu then 'gpu_labels_present'
             when ts_ms not between {{ ts_min_ms }} and {{ ts_max_ms }} then 'sample_time'
             when isnan(v) or isinf(v) then 'finite'
             when v >= dcgm_blank_min() or dcgm_int32_blank(v) then 'dcgm_blank_sentinel'
             when v < 0 then 'greater_than_or_equal_to(0)'
             else implausible
        end as check_name
    from checked
)

select
    row_number,
    metric as column_name,
    check_name,
    case when check_name in ('sample_syntax', 'gpu_labels_present', 'sample_time') then line else value_text end as value,
    case check_name
        when 'sample_syntax' then 'not a sample: needs a metric name, labels, a numeric value and a time'
        when 'gpu_labels_present' then 'sample has no UUID or gpu label, so it belongs to no GPU (exporter dummy value?)'
        when 'sample_time' then 'sample time outside the years a clock can write (telemetry_limits.csv sample_time_min/max)'
        when 'finite' then 'value is NaN or infinite'
        when 'dcgm_blank_sentinel' then 'DCGM blank sentinel (no reading), treated as missing'
        when 'greater_than_or_equal_to(0)' then 'negative reading'
        else 'reading no board can produce: ' || limit_text
    end as message
from failed
where check_name is not null
