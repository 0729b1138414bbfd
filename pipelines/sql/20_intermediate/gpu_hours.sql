-- gpu_hours: one row per physical GPU and UTC hour, built from every file's parts.
-- Energy tiers:
--   counter         DCGM energy counter differences (measured). A drop is a reset: the counter
--                   restarts from zero, so the energy after it is the new reading. Across a gap
--                   the difference is still measured energy; the gap is flagged, not filled.
--   power_integral  mean power x observed time (measured), plus, for time inside the hour that
--                   no sample covers (a gap longer than gap_s), mean power x gap, bounded by the
--                   GPU's idle power and the higher of its TDP and the hour's peak (gpu_specs):
--                   flagged and counted in estimated_kwh.
-- Variables: interval_s, gap_s, mj_per_kwh, w_per_kw, s_per_h.
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
        min(power_w_min) as power_w_min,
        max(power_w_max) as power_w_max,
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

timing as (
    select
        *,
        least(getvariable('s_per_h'), n_scrapes * getvariable('interval_s')) as observed_s,
        -- unobserved time between this hour's first and last sample beyond normal sampling
        greatest(0, epoch(last_ts) - epoch(first_ts) - (n_scrapes - 1) * getvariable('interval_s')) as inner_gap_s,
        epoch(first_energy_ts) - epoch(prev_energy_ts) as boundary_s
    from with_previous
),

energy as (
    select
        *,
        case when n_energy > 0 then
            case when last_energy_mj >= first_energy_mj then last_energy_mj - first_energy_mj
                 else (max_energy_mj - first_energy_mj) + last_energy_mj end
        end as within_mj,
        -- from the previous hour's last reading to this hour's first
        case when n_energy > 0 and prev_energy_ts is not null then
            case when first_energy_mj >= prev_energy_mj then first_energy_mj - prev_energy_mj else first_energy_mj end
        end as boundary_mj,
        inner_gap_s > getvariable('gap_s') or coalesce(boundary_s > getvariable('gap_s') and boundary_s < getvariable('s_per_h'), false) as has_gap
    from timing
),

specs as (
    -- the board's idle and TDP power, through the same aliases as everywhere (case, punctuation)
    select a.key, max(s.value) filter (where s.metric = 'idle_w') as idle_w, max(s.value) filter (where s.metric = 'tdp_w') as tdp_w
    from (select gpu_key(alias) as key, gpu_model from ref_gpu_aliases
          union select gpu_key(gpu_model), gpu_model from ref_gpu_specs) a
    join ref_gpu_specs s on s.gpu_model = a.gpu_model
    group by a.key
),

valued as (
    select
        e.*,
        coalesce(sp.idle_w, 0) as gap_low_w,
        greatest(coalesce(sp.tdp_w, 0), e.power_w_max) as gap_high_w,
        case when n_energy > 0 then (within_mj + coalesce(boundary_mj, 0)) / getvariable('mj_per_kwh') end as counter_kwh,
        case when power_w_mean is not null then power_w_mean * observed_s / getvariable('s_per_h') / getvariable('w_per_kw') end as observed_power_kwh,
        case when e.power_w_mean is not null and e.inner_gap_s > getvariable('gap_s') then e.inner_gap_s / getvariable('s_per_h') / getvariable('w_per_kw') end as gap_h_kw
    from energy e
    left join specs sp on sp.key = gpu_key(e.gpu_model_raw)
)

select
    host,
    gpu_uuid,
    gpu_index,
    gpu_model_raw,
    instance_id,
    hour_start,
    coalesce(counter_kwh, observed_power_kwh + coalesce(power_w_mean * gap_h_kw, 0)) as energy_kwh,
    coalesce(counter_kwh, observed_power_kwh + coalesce(least(gap_low_w, power_w_mean) * gap_h_kw, 0)) as energy_kwh_low,
    coalesce(counter_kwh, observed_power_kwh + coalesce(greatest(gap_high_w, power_w_mean) * gap_h_kw, 0)) as energy_kwh_high,
    case when counter_kwh is null then coalesce(power_w_mean * gap_h_kw, 0) else 0 end as estimated_kwh,
    case when n_energy > 0 then 'counter' when power_w_mean is not null then 'power_integral' end as energy_tier,
    has_gap,
    greatest(inner_gap_s, 0) as gap_s,
    power_w_mean,
    util_mean,
    sm_active_mean,
    tensor_active_mean,
    least(1.0, observed_s / getvariable('s_per_h')) as coverage,
    n_scrapes
from valued
