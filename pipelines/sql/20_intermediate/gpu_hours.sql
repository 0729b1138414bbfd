-- gpu_hours: one row per physical GPU and UTC hour, built from every file's parts.
-- Energy tiers: counter (DCGM energy counter differences, reset-aware) else power_integral
-- (mean power x observed time). Variables: interval_s, gap_s, mj_per_kwh, w_per_kw.
with combined as (
    select
        gpu_uuid,
        hour_start,
        any_value(host) as host,
        any_value(gpu_index) as gpu_index,
        any_value(gpu_model_raw) as gpu_model_raw,
        any_value(instance_id) as instance_id,
        sum(n_scrapes) as n_scrapes,
        min(first_ts) as first_ts,
        max(last_ts) as last_ts,
        arg_min(first_energy_mj, first_energy_ts) as first_energy_mj,
        min(first_energy_ts) as first_energy_ts,
        arg_max(last_energy_mj, last_energy_ts) as last_energy_mj,
        max(last_energy_ts) as last_energy_ts,
        max(max_energy_mj) as max_energy_mj,
        sum(n_energy) as n_energy,
        sum(power_w_sum) / nullif(sum(n_power), 0) as power_w_mean,
        sum(util_sum) / nullif(sum(n_util), 0) as util_mean,
        sum(sm_active_sum) / nullif(sum(n_sm_active), 0) as sm_active_mean,
        sum(tensor_active_sum) / nullif(sum(n_tensor_active), 0) as tensor_active_mean
    from gpu_hour_parts
    group by gpu_uuid, hour_start
),

with_previous as (
    select
        *,
        lag(last_energy_mj) over w as prev_energy_mj,
        lag(last_energy_ts) over w as prev_energy_ts
    from combined
    window w as (partition by gpu_uuid order by hour_start)
),

energy as (
    select
        *,
        -- inside the hour; a drop is a reset, after which the counter restarts from zero
        case when n_energy > 0 then
            case when last_energy_mj >= first_energy_mj then last_energy_mj - first_energy_mj
                 else (max_energy_mj - first_energy_mj) + last_energy_mj end
        end as within_mj,
        -- from the previous hour's last reading to this hour's first, when they are one interval apart
        case when n_energy > 0 and prev_energy_ts is not null
                  and epoch(first_energy_ts) - epoch(prev_energy_ts) <= getvariable('gap_s') then
            case when first_energy_mj >= prev_energy_mj then first_energy_mj - prev_energy_mj else first_energy_mj end
        end as boundary_mj,
        least(1.0, n_scrapes * getvariable('interval_s') / 3600.0) as coverage
    from with_previous
)

select
    host,
    gpu_uuid,
    gpu_index,
    gpu_model_raw,
    instance_id,
    hour_start,
    case when n_energy > 0 then (within_mj + coalesce(boundary_mj, 0)) / getvariable('mj_per_kwh')
         when power_w_mean is not null then power_w_mean * coverage / getvariable('w_per_kw')
    end as energy_kwh,
    case when n_energy > 0 then 'counter' when power_w_mean is not null then 'power_integral' end as energy_tier,
    power_w_mean,
    util_mean,
    sm_active_mean,
    tensor_active_mean,
    coverage,
    n_scrapes
from energy
