-- Valid DCGM samples of one file (every metric: a GPU is observed even when it reports no
-- power fields) -> one row per physical GPU and UTC hour (the file's part of
-- that GPU-hour). MIG instances repeat device-level fields under the same UUID; grouping by
-- UUID and counting distinct scrape times counts such a GPU once.
with samples as (
    select s.* from _staged s
    anti join (select distinct row_number from _rejects) r using (row_number)
)

select
    any_value(host) as host,
    gpu_uuid,
    any_value(gpu_index) as gpu_index,
    any_value(gpu_model_raw) as gpu_model_raw,
    any_value(instance_id) as instance_id,
    date_trunc('hour', ts) as hour_start,
    count(distinct ts) as n_scrapes,
    min(ts) as first_ts,
    max(ts) as last_ts,
    arg_min(canonical_value, ts) filter (where field = 'energy_mj') as first_energy_mj,
    min(ts) filter (where field = 'energy_mj') as first_energy_ts,
    arg_max(canonical_value, ts) filter (where field = 'energy_mj') as last_energy_mj,
    max(ts) filter (where field = 'energy_mj') as last_energy_ts,
    max(canonical_value) filter (where field = 'energy_mj') as max_energy_mj,
    count(*) filter (where field = 'energy_mj') as n_energy,
    null::bigint as n_energy_resets,
    sum(canonical_value) filter (where field = 'power_w') as power_w_sum,
    count(*) filter (where field = 'power_w') as n_power,
    sum(canonical_value) filter (where field = 'util_ratio') as util_sum,
    count(*) filter (where field = 'util_ratio') as n_util,
    sum(canonical_value) filter (where field = 'sm_active_ratio') as sm_active_sum,
    count(*) filter (where field = 'sm_active_ratio') as n_sm_active,
    sum(canonical_value) filter (where field = 'tensor_active_ratio') as tensor_active_sum,
    count(*) filter (where field = 'tensor_active_ratio') as n_tensor_active
from samples
group by gpu_uuid, date_trunc('hour', ts)
