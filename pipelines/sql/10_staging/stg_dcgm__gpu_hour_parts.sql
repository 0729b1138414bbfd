-- A file's telemetry groups -> one row per physical GPU and UTC hour (the file's part of that
-- GPU-hour). Groups of one GPU differ by metric, by workload and by MIG instance. An hour's
-- scrapes are counted per instance and metric: series that overlap in time were read at the same
-- scrapes (pods time-slicing the GPU each get its series, vgpu label or not) and count once;
-- series one after another (pods in turn) add up. The maximum is then taken over metrics and
-- over instances (concurrent, same UUID), so a shared GPU counts each scrape once.
with good as (
    select * from _tel where not bad_metric and not no_gpu and not is_request and n_good > 0
),

ordered as (
    -- a series starts a new run of overlapping series unless an earlier one reaches its start
    select
        gpu_uuid, hour_index, mig_instance, metric, t0_ms, t1_ms, n_good,
        (t1_ms - t0_ms) / nullif(n_good - 1, 0) as spacing_ms,
        case when t0_ms <= max(t1_ms) over (partition by gpu_uuid, hour_index, mig_instance, metric order by t0_ms, t1_ms
                                            rows between unbounded preceding and 1 preceding) then 0 else 1 end as starts
    from good
),

islands as (
    -- a run's scrapes: as many as its span holds at the closest spacing of any of its series,
    -- kept between its best-covered series' and all its series' together (the best-covered
    -- series' alone where no series has two readings to space)
    select gpu_uuid, hour_index, mig_instance, metric,
        least(sum(n_good), greatest(max(n_good), coalesce(round((max(t1_ms) - min(t0_ms)) / min(spacing_ms)) + 1, 0)))::bigint as n
    -- range, not rows: series with the same span share a run whichever of them comes first
    from (select *, sum(starts) over (partition by gpu_uuid, hour_index, mig_instance, metric order by t0_ms, t1_ms
                                      range between unbounded preceding and current row) as island from ordered)
    group by gpu_uuid, hour_index, mig_instance, metric, island
),

per_instance as (
    -- scrapes of one instance in the hour: the best-covered metric, its runs added up
    select gpu_uuid, hour_index, mig_instance, max(n) as n_scrapes
    from (select gpu_uuid, hour_index, mig_instance, metric, sum(n) as n from islands group by all)
    group by all
),

-- the GPU-hour's scrapes: its best-covered instance (MIG instances scrape concurrently); a join,
-- not a correlated subquery in the select list, which Spark cannot plan inside an aggregate
per_gpu_hour as (
    select gpu_uuid, hour_index, max(n_scrapes) as n_scrapes from per_instance group by all
)

select
    pick(g.host) as host,
    g.gpu_uuid,
    pick(g.gpu_index) as gpu_index,
    pick(g.gpu_model_raw) as gpu_model_raw,
    pick(g.instance_id) as instance_id,
    make_timestamp(g.hour_index * 3600000000) as hour_start,
    pick(p.n_scrapes) as n_scrapes,
    make_timestamp(min(g.t0_ms) * 1000) as first_ts,
    make_timestamp(max(g.t1_ms) * 1000) as last_ts,
    arg_min(g.v_first, g.t0_ms) filter (where g.field = 'energy_mj') * min(g.to_canonical) filter (where g.field = 'energy_mj') as first_energy_mj,
    make_timestamp(min(g.t0_ms) filter (where g.field = 'energy_mj') * 1000) as first_energy_ts,
    arg_max(g.v_last, g.t1_ms) filter (where g.field = 'energy_mj') * min(g.to_canonical) filter (where g.field = 'energy_mj') as last_energy_mj,
    make_timestamp(max(g.t1_ms) filter (where g.field = 'energy_mj') * 1000) as last_energy_ts,
    max(g.v_max * g.to_canonical) filter (where g.field = 'energy_mj') as max_energy_mj,
    sum(g.n_good) filter (where g.field = 'energy_mj') as n_energy,
    null::bigint as n_energy_resets,
    sum(g.v_sum * g.to_canonical) filter (where g.field = 'power_w') as power_w_sum,
    sum(g.n_good) filter (where g.field = 'power_w') as n_power,
    sum(g.v_sum * g.to_canonical) filter (where g.field = 'util_ratio') as util_sum,
    sum(g.n_good) filter (where g.field = 'util_ratio') as n_util,
    sum(g.v_sum * g.to_canonical) filter (where g.field = 'sm_active_ratio') as sm_active_sum,
    sum(g.n_good) filter (where g.field = 'sm_active_ratio') as n_sm_active,
    sum(g.v_sum * g.to_canonical) filter (where g.field = 'tensor_active_ratio') as tensor_active_sum,
    sum(g.n_good) filter (where g.field = 'tensor_active_ratio') as n_tensor_active,
    min(g.v_min * g.to_canonical) filter (where g.field = 'power_w') as power_w_min,
    max(g.v_max * g.to_canonical) filter (where g.field = 'power_w') as power_w_max
from good g
join per_gpu_hour p on p.gpu_uuid = g.gpu_uuid and p.hour_index = g.hour_index
group by g.gpu_uuid, g.hour_index
