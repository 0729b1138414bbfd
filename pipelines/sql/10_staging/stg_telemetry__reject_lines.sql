-- Locate a telemetry file's rejected samples (run only when its groups counted some): the same
-- tests as stg_telemetry__groups and stg_dcgm__tel, sample by sample, with row numbers.
-- Input: view _tel_samples_numbered(row_number, series, value_text, ts_ms, line).
with parsed as (
    select
        *,
        split_part(series, '{', 1) as metric,
        case when strpos(series, '{') > 0 then substr(series, strpos(series, '{') + 1) else '' end as labels
    from _tel_samples_numbered
),

checked as (
    select
        row_number,
        coalesce(metric, '') as metric,
        line,
        value_text,
        try_cast(value_text as double) as v,
        ts_ms,
        gpu_identity(labels) is null as no_gpu,
        coalesce(regexp_full_match(metric, '[a-zA-Z_:][a-zA-Z0-9_:]*'), false) as good_name
    from parsed
)

select row_number, metric as column_name, check_name, value, message from (
    select row_number, metric, 'sample_syntax' as check_name, line as value,
           'not a sample: needs a metric name, labels, a numeric value and a time' as message
    from checked where v is null or ts_ms is null or not good_name
    union all
    select row_number, metric, 'gpu_labels_present', line,
           'sample has no UUID or gpu label, so it belongs to no GPU (exporter dummy value?)'
    from checked where no_gpu and v is not null and ts_ms is not null and good_name
    union all
    select row_number, metric, 'finite', value_text, 'value is NaN or infinite' from checked where isnan(v) or isinf(v)
    union all
    select row_number, metric, 'dcgm_blank_sentinel', value_text, 'DCGM blank sentinel (no reading), treated as missing'
    from checked where v >= dcgm_blank_min() or dcgm_int32_blank(v)
    union all
    select row_number, metric, 'greater_than_or_equal_to(0)', value_text, 'negative reading' from checked where v < 0
)
