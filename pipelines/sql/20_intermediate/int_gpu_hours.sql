-- Grain: physical GPU x UTC hour. Every hour with readings (int_gpu_hour_readings) and every
-- hour only a counter gap reaches (int_gpu_hour_gaps), built from every file's parts, with its
-- energy tier (counter, counter_gap, power_integral: the two models say what each means).
-- No hour is charged more than the board can draw in an hour (the top of its TDP range x
-- board_power_tolerance from ref_assumptions): the excess is cut off and kept in excess_kwh,
-- which findings_month reports.
-- Workloads: an hour filled from a gap takes the workload shares of the last hour observed
-- before the gap (share_hour), the job that was running when the readings stopped.
-- Variables: gap_s, w_per_kw, s_per_h.
with hours as (
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
        coalesce(v.max_w, sp.max_w) * (select max(value) from ref_assumptions where assumption_id = 'board_power_tolerance') / getvariable('w_per_kw') as board_max_kwh
    from int_gpu_hour_readings v
    full outer join int_gpu_hour_gaps p on p.gpu_uuid = v.gpu_uuid and p.hour_start = v.hour_start
    left join int_gpu_board_specs sp on v.hour_start is null and sp.key = gpu_key(p.gpu_model_raw)
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
