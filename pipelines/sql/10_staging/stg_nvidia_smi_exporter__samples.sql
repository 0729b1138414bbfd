-- utkuozdemir/nvidia_gpu_exporter's Prometheus text -> cells, as a view.
-- Input: view {{ prom }}(row_number, series, value_text, ts_ms, line): the samples as
-- stg_dcgm_prom__samples.sql reads any Prometheus text; _nvsmi_info(uuid, name): each GPU's
-- name from nvidia_smi_gpu_info; _nvsmi_file(host). The exporter labels a GPU `uuid` without
-- nvidia-smi's "GPU-" prefix and names it only on the info metric: each sample gets the UUID,
-- model and host labels the telemetry staging reads, its own labels kept after them. A sample
-- without a uuid gets none: no GPU. Only the metrics sources/nvidia_smi_fields.csv names are
-- cells (the exporter's hundred other gauges, per-process ones among them, are not read: a
-- process's series summed as if it were a workload would count a scrape once per process), and
-- lines whose name is no metric name ({{ metric_name }}), which the telemetry checks reject.
with samples as (
    select
        *,
        split_part(series, '{', 1) as metric,
        case when strpos(series, '{') > 0 then substr(series, strpos(series, '{') + 1) else '' end as own_labels
    from {{ prom }}
),

identified as (
    select
        *,
        prom_label(own_labels, 'uuid') as exporter_uuid,
        case when starts_with(prom_label(own_labels, 'uuid'), 'GPU-') then prom_label(own_labels, 'uuid')
             else 'GPU-' || prom_label(own_labels, 'uuid') end as gpu_uuid,
        coalesce(regexp_full_match(metric, {{ metric_name }}), false) as named
    from samples
)

select
    i.row_number,
    i.metric,
    concat_ws(
        ',',
        'UUID="' || i.gpu_uuid || '"',
        'modelName="' || replace(n.name, '"', '') || '"',
        case when i.gpu_uuid is not null then 'Hostname="' || replace(d.host, '"', '') || '"' end,
        nullif(i.own_labels, '')
    ) as labels,
    i.metric as column_name,
    i.value_text,
    null::varchar as unit,
    i.ts_ms,
    i.line
from identified i
cross join _nvsmi_file d
left join _nvsmi_info n on n.uuid = i.exporter_uuid
where i.metric in (select l.metric from _nvsmi_limits l) or not i.named
