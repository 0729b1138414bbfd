-- gpu_hours: one row per physical GPU and UTC hour, built from every file's parts.
-- Energy tiers:
--   counter         DCGM energy counter differences (measured). A drop is a reset: the counter
--                   restarts from zero, so the energy after it is the new reading.
--   counter_gap     an hour no sample covers, inside a gap between two counter readings (more
--                   than gap_s apart). The counter difference across a gap is measured energy;
--                   only where it fell is inferred: it is spread over the gap's hours in
--                   proportion to the time each holds, so an hour of another month gets that
--                   month's part. A reset inside a gap (second reading lower) counts the new
--                   reading as the energy drawn since the reset, placed just before it at the
--                   power seen around the gap, and estimates the time before the reset at that
--                   power, bounded by the board's idle power and its maximum (estimated_kwh).
--   power_integral  mean power x observed time (measured), plus, for time inside the hour that
--                   no sample covers (a gap longer than gap_s), mean power x gap, bounded by the
--                   GPU's idle power and the higher of its maximum and the hour's peak (gpu_specs):
--                   flagged and counted in estimated_kwh.
-- No hour is charged more than the board can draw in an hour (the top of its TDP range x
-- board_power_tolerance from ref_assumptions): the excess is cut off and kept in excess_kwh,
-- which findings_month reports.
-- Workloads: an hour filled from a gap takes the workload shares of the last hour observed
-- before the gap (share_hour), the job that was running when the readings stopped.
-- Variables: interval_s, gap_s, mj_per_kwh, w_per_kw, s_per_h.
with combined as (
    select
        gpu_uuid,
        hour_start,
        pick(host) as host,
        pick(gpu_index) as gpu_index,
        pick(gpu_model_raw) as gpu_model_raw,
        pick(instance_id) as instance_id,
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

specs as (
    -- the board's idle and TDP power, through the same aliases as everywhere (case, punctuation);
    -- the most it can draw is the top of its TDP range (a part sold at several power limits)
    select a.key, max(s.value) filter (where s.metric = 'idle_w') as idle_w, max(s.value) filter (where s.metric = 'tdp_w') as tdp_w,
        max(s.high) filter (where s.metric = 'tdp_w') as max_w
    from (select gpu_key(alias) as key, gpu_model from ref_gpu_aliases
          union
          select gpu_key(gpu_model), gpu_model from ref_gpu_specs) a
    join ref_gpu_specs s on s.gpu_model = a.gpu_model
    group by a.key
),

assumed as (
    select
        max(value) filter (where assumption_id = 'board_power_tolerance') as board_tolerance,
        max(value) filter (where assumption_id = 'gpu_power_fraction_of_tdp') as power_fraction
    from ref_assumptions
),

readings as (
    -- the hour's own readings, with the GPU's power as measured in the hour (gauge, else the
    -- counter's rise over the time it spans) and the last counter reading of an earlier hour
    select
        c.*,
        sp.idle_w,
        sp.tdp_w,
        sp.max_w,
        coalesce(c.power_w_mean,
                 case when c.last_energy_mj > c.first_energy_mj and c.last_energy_ts > c.first_energy_ts
                      then (c.last_energy_mj - c.first_energy_mj) / getvariable('mj_per_kwh') * getvariable('w_per_kw')
                           * getvariable('s_per_h') / (epoch(c.last_energy_ts) - epoch(c.first_energy_ts)) end) as rate_w,
        last_value(c.last_energy_mj ignore nulls) over before as prev_energy_mj,
        last_value(c.last_energy_ts ignore nulls) over before as prev_energy_ts,
        last_value(c.hour_start) over before as prev_hour
    from combined c
    left join specs sp on sp.key = gpu_key(c.gpu_model_raw)
    window before as (partition by c.gpu_uuid order by c.hour_start rows between unbounded preceding and 1 preceding)
),

timing as (
    select
        *,
        least(getvariable('s_per_h'), n_scrapes * getvariable('interval_s')) as observed_s,
        -- unobserved time between this hour's first and last sample beyond normal sampling
        greatest(0, epoch(last_ts) - epoch(first_ts) - (n_scrapes - 1) * getvariable('interval_s')) as inner_gap_s,
        epoch(first_energy_ts) - epoch(prev_energy_ts) as boundary_s,
        -- the power of the (up to) six observed hours on each side of this hour's first reading:
        -- one hour's mean follows the job's swings, six average them out
        avg(rate_w) over (partition by gpu_uuid order by hour_start rows between 6 preceding and 1 preceding) as prev_rate_w,
        avg(rate_w) over (partition by gpu_uuid order by hour_start rows between current row and 5 following) as next_rate_w
    from readings
),

gaps as (
    -- one row per unobserved stretch between two counter readings of a GPU
    select
        t.gpu_uuid, t.host, t.gpu_index, t.gpu_model_raw, t.instance_id, t.idle_w, t.tdp_w, t.max_w,
        t.prev_hour as share_hour,
        t.prev_energy_ts as t0,
        t.first_energy_ts as t1,
        t.boundary_s as gap_s,
        t.first_energy_mj < t.prev_energy_mj as reset,
        case when t.first_energy_mj >= t.prev_energy_mj then t.first_energy_mj - t.prev_energy_mj
             else t.first_energy_mj end / getvariable('mj_per_kwh') as measured_kwh,
        -- the power measured around the gap (both sides weigh alike), else the assumed share of TDP
        coalesce((coalesce(t.prev_rate_w, t.next_rate_w) + coalesce(t.next_rate_w, t.prev_rate_w)) / 2,
                 t.tdp_w * (select power_fraction from assumed)) as power_w_around
    from timing t
    where t.n_energy > 0 and t.prev_energy_ts is not null and t.boundary_s > getvariable('gap_s')
),

bounded as (
    -- within the board's bounds where they are known
    select *, greatest(coalesce(idle_w, 0), least(coalesce(max_w, power_w_around), power_w_around)) as power_w_est
    from gaps
),

gap_spans as (
    -- after a reset the new reading is the energy since the reset: it took reading / power
    -- seconds before it; the rest of the gap ran before the reset
    select *,
        case when reset and power_w_est > 0
             then least(gap_s, measured_kwh * getvariable('w_per_kw') * getvariable('s_per_h') / power_w_est)
             else gap_s end as measured_s
    from bounded
),

gap_hours as (
    select g.*, h.hour_start
    from gap_spans g,
         unnest(generate_series(date_trunc('hour', g.t0), date_trunc('hour', g.t1), interval 1 hour)) h (hour_start)
),

pieces as (
    select *,
        -- time of the hour inside the part of the gap after the reset (all of it without one)
        greatest(0, epoch(least(t1, hour_start + interval 1 hour)) - greatest(epoch(hour_start), epoch(t1) - measured_s)) as in_measured_s,
        greatest(0, least(epoch(hour_start + interval 1 hour), epoch(t1) - measured_s) - greatest(epoch(hour_start), epoch(t0))) as in_estimated_s
    from gap_hours
),

gap_parts as (
    select
        gpu_uuid,
        hour_start,
        pick(host) as host,
        pick(gpu_index) as gpu_index,
        pick(gpu_model_raw) as gpu_model_raw,
        pick(instance_id) as instance_id,
        arg_max(share_hour, t0) as share_hour,
        sum(measured_kwh * in_measured_s / nullif(measured_s, 0)) as gap_measured_kwh,
        sum(power_w_est * in_estimated_s) / getvariable('s_per_h') / getvariable('w_per_kw') as gap_estimated_kwh,
        sum(least(coalesce(idle_w, 0), power_w_est) * in_estimated_s) / getvariable('s_per_h') / getvariable('w_per_kw') as gap_estimated_low_kwh,
        sum(greatest(coalesce(max_w, power_w_est), power_w_est) * in_estimated_s) / getvariable('s_per_h') / getvariable('w_per_kw') as gap_estimated_high_kwh,
        sum(in_measured_s + in_estimated_s) as gap_covered_s,
        max(gap_s) as gap_s
    from pieces
    group by gpu_uuid, hour_start
),

energy as (
    select
        *,
        case when n_energy > 0 then
            case when last_energy_mj >= first_energy_mj then last_energy_mj - first_energy_mj
                 else (max_energy_mj - first_energy_mj) + last_energy_mj end
        end as within_mj,
        -- from the previous reading to this hour's first, when no gap lies between them (a gap's
        -- difference is spread by gap_parts)
        case when n_energy > 0 and prev_energy_ts is not null and boundary_s <= getvariable('gap_s') then
            case when first_energy_mj >= prev_energy_mj then first_energy_mj - prev_energy_mj else first_energy_mj end
        end as boundary_mj
    from timing
),

valued as (
    select
        e.*,
        coalesce(e.idle_w, 0) as gap_low_w,
        greatest(coalesce(e.max_w, 0), e.power_w_max) as gap_high_w,
        case when n_energy > 0 then (within_mj + coalesce(boundary_mj, 0)) / getvariable('mj_per_kwh') end as counter_kwh,
        case when power_w_mean is not null then power_w_mean * observed_s / getvariable('s_per_h') / getvariable('w_per_kw') end as observed_power_kwh,
        case when e.power_w_mean is not null and coalesce(e.n_energy, 0) = 0 and e.inner_gap_s > getvariable('gap_s')
             then e.inner_gap_s / getvariable('s_per_h') / getvariable('w_per_kw') end as gap_h_kw
    from energy e
),

own as (
    -- an hour whose readings carry neither energy nor power stays unknown (null) unless a gap
    -- reaches it; a gap-only hour has no readings of its own (0 to add the gap's part to)
    select *,
        coalesce(counter_kwh, observed_power_kwh + coalesce(power_w_mean * gap_h_kw, 0)) as own_kwh,
        coalesce(counter_kwh, observed_power_kwh + coalesce(least(gap_low_w, power_w_mean) * gap_h_kw, 0)) as own_low_kwh,
        coalesce(counter_kwh, observed_power_kwh + coalesce(greatest(gap_high_w, power_w_mean) * gap_h_kw, 0)) as own_high_kwh
    from valued
),

hours as (
    -- the hours with readings, and the hours only a gap reaches
    select
        coalesce(v.host, p.host) as host,
        coalesce(v.gpu_uuid, p.gpu_uuid) as gpu_uuid,
        coalesce(v.gpu_index, p.gpu_index) as gpu_index,
        coalesce(v.gpu_model_raw, p.gpu_model_raw) as gpu_model_raw,
        coalesce(v.instance_id, p.instance_id) as instance_id,
        coalesce(v.hour_start, p.hour_start) as hour_start,
        coalesce(v.hour_start, p.share_hour) as share_hour,
        case when v.own_kwh is not null or p.gpu_uuid is not null
             then coalesce(v.own_kwh, 0) + coalesce(p.gap_measured_kwh, 0) end as base_kwh,
        case when v.own_low_kwh is not null or p.gpu_uuid is not null
             then coalesce(v.own_low_kwh, 0) + coalesce(p.gap_measured_kwh, 0) end as base_low_kwh,
        case when v.own_high_kwh is not null or p.gpu_uuid is not null
             then coalesce(v.own_high_kwh, 0) + coalesce(p.gap_measured_kwh, 0) end as base_high_kwh,
        coalesce(p.gap_estimated_kwh, 0) as gap_estimated_kwh,
        coalesce(p.gap_estimated_low_kwh, 0) as gap_estimated_low_kwh,
        coalesce(p.gap_estimated_high_kwh, 0) as gap_estimated_high_kwh,
        case when v.counter_kwh is null and v.power_w_mean is not null then coalesce(v.power_w_mean * v.gap_h_kw, 0) else 0 end
            as power_estimated_kwh,
        coalesce(p.gap_measured_kwh, 0) + coalesce(p.gap_estimated_kwh, 0) as gap_kwh,
        case when v.n_energy > 0 then 'counter'
             when p.gpu_uuid is not null and v.hour_start is null then 'counter_gap'
             when v.power_w_mean is not null then 'power_integral'
             when p.gpu_uuid is not null then 'counter_gap' end as energy_tier,
        coalesce(v.inner_gap_s > getvariable('gap_s'), false) or p.gpu_uuid is not null as has_gap,
        greatest(coalesce(v.inner_gap_s, 0), coalesce(p.gap_s, 0)) as gap_s,
        v.power_w_mean,
        v.util_mean,
        v.sm_active_mean,
        v.tensor_active_mean,
        least(1.0, coalesce(v.observed_s, 0) / getvariable('s_per_h')) as coverage,
        least(1.0, (coalesce(v.observed_s, 0) + coalesce(p.gap_covered_s, 0)) / getvariable('s_per_h')) as energy_coverage,
        coalesce(v.n_scrapes, 0) as n_scrapes,
        coalesce(v.max_w, sp.max_w) * (select board_tolerance from assumed) / getvariable('w_per_kw') as board_max_kwh
    from own v
    full outer join gap_parts p on p.gpu_uuid = v.gpu_uuid and p.hour_start = v.hour_start
    left join specs sp on v.hour_start is null and sp.key = gpu_key(p.gpu_model_raw)
),

totals as (
    select *,
        base_kwh + gap_estimated_kwh as raw_kwh,
        base_low_kwh + gap_estimated_low_kwh as raw_low_kwh,
        base_high_kwh + gap_estimated_high_kwh as raw_high_kwh
    from hours
),

-- least() skips nulls, so an hour whose energy is unknown would come out at the board's maximum:
-- the cap applies only to energy that was measured or estimated.
capped as (
    select *,
        case when raw_kwh is not null then least(raw_kwh, coalesce(board_max_kwh, raw_kwh)) end as capped_kwh,
        case when raw_low_kwh is not null then least(raw_low_kwh, coalesce(board_max_kwh, raw_low_kwh)) end as capped_low_kwh,
        case when raw_high_kwh is not null then least(raw_high_kwh, coalesce(board_max_kwh, raw_high_kwh)) end as capped_high_kwh
    from totals
)

select
    host,
    gpu_uuid,
    gpu_index,
    gpu_model_raw,
    instance_id,
    hour_start,
    share_hour,
    capped_kwh as energy_kwh,
    capped_low_kwh as energy_kwh_low,
    capped_high_kwh as energy_kwh_high,
    -- the estimated part survives the cap only as far as the capped total still holds it
    least(power_estimated_kwh + gap_estimated_kwh, capped_kwh) as estimated_kwh,
    least(gap_kwh, capped_kwh) as gap_kwh,
    greatest(0, raw_kwh - coalesce(board_max_kwh, raw_kwh)) as excess_kwh,
    board_max_kwh,
    energy_tier,
    has_gap,
    gap_s,
    power_w_mean,
    util_mean,
    sm_active_mean,
    tensor_active_mean,
    coverage,
    energy_coverage,
    n_scrapes
from capped
