-- Grain: physical GPU x UTC hour with readings. The hour's own readings combined over every
-- file's parts, with what the hour's energy rests on:
--   counter         DCGM energy counter differences (measured). A drop is a reset: the counter
--                   restarts from zero, so the energy after it is the new reading.
--   power_integral  mean power x observed time (measured), plus, for time inside the hour that
--                   no sample covers (a gap longer than gap_s), mean power x gap, bounded by the
--                   GPU's idle power and the higher of its maximum and the hour's peak (gpu_specs):
--                   own_low_kwh / own_high_kwh. Samples every interval_s say nothing of the power
--                   between them: the observed part's range is one interval at the hour's swing
--                   (peak less lowest sample) either side, as far apart as the sums taking each
--                   interval's first or its last sample can be.
-- A difference across a gap between two hours is not here: int_gpu_hour_gaps spreads it.
-- Ephemeral: inlined into the models that read it. Variables: interval_s, gap_s, mj_per_kwh,
-- w_per_kw, s_per_h.
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

readings as (
    -- the hour's own readings, with the GPU's power as measured in the hour (gauge, else the
    -- counter's rise over the time it spans) and the last counter reading of an earlier hour
    select
        c.*,
        sp.idle_w,
        sp.tdp_w,
        sp.max_w,
        epoch(c.last_ts) - epoch(c.first_ts) as span_s,
        coalesce(c.power_w_mean,
                 case when c.last_energy_mj > c.first_energy_mj and c.last_energy_ts > c.first_energy_ts
                      then (c.last_energy_mj - c.first_energy_mj) / getvariable('mj_per_kwh') * getvariable('w_per_kw')
                           * getvariable('s_per_h') / (epoch(c.last_energy_ts) - epoch(c.first_energy_ts)) end) as rate_w,
        last_value(c.last_energy_mj ignore nulls) over before as prev_energy_mj,
        last_value(c.last_energy_ts ignore nulls) over before as prev_energy_ts,
        last_value(c.hour_start) over before as prev_hour
    from combined c
    left join int_gpu_board_specs sp on sp.key = gpu_key(c.gpu_model_raw)
    window before as (partition by c.gpu_uuid order by c.hour_start rows between unbounded preceding and 1 preceding)
),

timing as (
    select
        *,
        -- each reading counts interval_s, but never past the readings' own span (and one interval
        -- after it): readings closer than interval_s (nvidia-smi at 1 s, a 15 s scrape under a
        -- 30 s setting) would otherwise count a job's first or last 20 minutes as its whole hour
        least(getvariable('s_per_h'), n_scrapes * getvariable('interval_s'), span_s + getvariable('interval_s')) as observed_s,
        -- unobserved time between this hour's first and last sample beyond normal sampling
        greatest(0, span_s - (n_scrapes - 1) * getvariable('interval_s')) as inner_gap_s,
        epoch(first_energy_ts) - epoch(prev_energy_ts) as boundary_s,
        -- the power of the (up to) six observed hours on each side of this hour's first reading:
        -- one hour's mean follows the job's swings, six average them out
        avg(rate_w) over (partition by gpu_uuid order by hour_start rows between 6 preceding and 1 preceding) as prev_rate_w,
        avg(rate_w) over (partition by gpu_uuid order by hour_start rows between current row and 5 following) as next_rate_w
    from readings
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
             then e.inner_gap_s / getvariable('s_per_h') / getvariable('w_per_kw') end as gap_h_kw,
        coalesce((e.power_w_max - e.power_w_min) * getvariable('interval_s') / getvariable('s_per_h') / getvariable('w_per_kw'), 0)
            as sampling_kwh
    from energy e
),

own as (
    -- an hour whose readings carry neither energy nor power stays unknown (null) unless a gap
    -- reaches it; a gap-only hour has no readings of its own (0 to add the gap's part to)
    select *,
        coalesce(counter_kwh, observed_power_kwh + coalesce(power_w_mean * gap_h_kw, 0)) as own_kwh,
        coalesce(counter_kwh, greatest(observed_power_kwh - sampling_kwh, 0) + coalesce(least(gap_low_w, power_w_mean) * gap_h_kw, 0))
            as own_low_kwh,
        coalesce(counter_kwh, observed_power_kwh + sampling_kwh + coalesce(greatest(gap_high_w, power_w_mean) * gap_h_kw, 0))
            as own_high_kwh
    from valued
)

select * from own
