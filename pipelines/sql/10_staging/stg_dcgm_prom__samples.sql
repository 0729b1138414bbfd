-- dcgm-exporter Prometheus text exposition -> typed samples. Input: temp table raw_prom_lines
-- (row_number = line number, line), _scrape (scrape_ts: the file's scrape time, used when a
-- sample has no timestamp of its own) and dcgm_fields (metric name aliases and unit scale).
-- Grain: one row per sample line; comments and blank lines are not samples.
with lines as (
    select * from raw_prom_lines
    where trim(line) <> '' and not starts_with(ltrim(line), '#')
),

parsed as (
    select
        row_number,
        line,
        regexp_extract(line, '^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+(-?[0-9]+))?\s*$',
                       ['metric', 'labels', 'value', 'ts']) as p
    from lines
),

typed as (
    select
        row_number,
        nullif(p.metric, '') as metric,
        num(p.value) as value,
        coalesce(make_timestamp(try_cast(nullif(p.ts, '') as bigint) * 1000), s.scrape_ts) as ts,
        prom_label(p.labels, 'UUID|gpu_uuid') as uuid_label,
        prom_label(p.labels, 'gpu') as gpu_index,
        prom_label(p.labels, 'modelName|model_name') as gpu_model_raw,
        prom_label(p.labels, 'Hostname|hostname|NODE_NAME|node') as host,
        prom_label(p.labels, 'instance_id|InstanceID') as instance_id,
        prom_label(p.labels, 'namespace') as namespace,
        prom_label(p.labels, 'pod') as pod,
        prom_label(p.labels, 'container') as container,
        prom_label(p.labels, 'GPU_I_ID') as mig_instance,
        f.field,
        f.to_canonical,
        p.value as _value,
        left(line, 200) as _line
    from parsed
    cross join _scrape s
    left join dcgm_fields f on f.field_name = nullif(p.metric, '')
)

select
    * exclude (_value, _line, uuid_label),
    coalesce(uuid_label, host || '/gpu' || gpu_index) as gpu_uuid,
    value * to_canonical as canonical_value,
    errors([
        case when metric is null or _value = '' then
            {'column_name': 'line', 'check_name': 'prometheus_sample_syntax', 'value': _line,
             'message': 'not a Prometheus sample line (name{labels} value [timestamp])'} end,
        case when metric is not null then cast_err(metric, _value, value, 'number') end,
        case when metric is not null and uuid_label is null and gpu_index is null then
            {'column_name': metric, 'check_name': 'gpu_labels_present', 'value': _line,
             'message': 'sample has no UUID or gpu label, so it belongs to no GPU (exporter dummy value?)'} end,
        case when value >= dcgm_blank_min() then
            {'column_name': metric, 'check_name': 'dcgm_blank_sentinel', 'value': _value,
             'message': 'DCGM blank sentinel (no reading), treated as missing'} end,
        case when isnan(value) or isinf(value) then
            {'column_name': metric, 'check_name': 'finite', 'value': _value, 'message': 'value is NaN or infinite'} end,
        case when field is not null and value < 0 then
            {'column_name': metric, 'check_name': 'greater_than_or_equal_to(0)', 'value': _value,
             'message': 'negative ' || field} end
    ]) as _errors
from typed
