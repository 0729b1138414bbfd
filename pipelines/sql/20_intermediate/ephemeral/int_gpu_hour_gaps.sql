-- Grain: physical GPU x UTC hour a gap reaches. The counter_gap tier: an hour no sample covers,
-- inside a gap between two counter readings (more than gap_s apart). The counter difference
-- across a gap is measured energy; only where it fell is inferred: it is spread over the gap's
-- hours in proportion to the time each holds, so an hour of another month gets that month's
-- part. A reset inside a gap (second reading lower) counts the new reading as the energy drawn
-- since the reset, placed just before it at the power seen around the gap, and estimates the
-- time before the reset at that power, bounded by the board's idle power and its maximum
-- (gap_estimated_kwh and its low/high). share_hour is the last hour observed before the gap:
-- the job that was running when the readings stopped takes the gap's hours.
-- Ephemeral: inlined into the models that read it. Variables: gap_s, mj_per_kwh, w_per_kw, s_per_h.
with gaps as (
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
                 t.tdp_w * (select max(value) from ref_assumptions where assumption_id = 'gpu_power_fraction_of_tdp')) as power_w_around
    from int_gpu_hour_readings t
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
)

select
    gpu_uuid, hour_start, pick(host) as host, pick(gpu_index) as gpu_index, pick(gpu_model_raw) as gpu_model_raw,
    pick(instance_id) as instance_id, arg_max(share_hour, t0) as share_hour,
    sum(measured_kwh * in_measured_s / nullif(measured_s, 0)) as gap_measured_kwh,
    sum(power_w_est * in_estimated_s) / getvariable('s_per_h') / getvariable('w_per_kw') as gap_estimated_kwh,
    sum(least(coalesce(idle_w, 0), power_w_est) * in_estimated_s) / getvariable('s_per_h') / getvariable('w_per_kw') as gap_estimated_low_kwh,
    sum(greatest(coalesce(max_w, power_w_est), power_w_est) * in_estimated_s) / getvariable('s_per_h') / getvariable('w_per_kw') as gap_estimated_high_kwh,
    sum(in_measured_s + in_estimated_s) as gap_covered_s,
    max(gap_s) as gap_s
from pieces
group by gpu_uuid, hour_start
