-- Grain: month x lever x scenario x subject. The month's measured GPU-hours replayed under one
-- lever at a time, as deltas against what happened (negative: a saving), each with bounds:
-- cost in the billing currency, facility energy (kWh), CO2e (kg, location-based, hour by hour
-- where a series gives it). `meterbook whatif` prints it; the audit's what-if section reads it.
--   region       int_whatif_region: the same work in another region (scenario = its zone)
--   shift        int_whatif_shift: deferrable jobs in the cleanest hours of their window
--   utilization  each workload under util_target does its work at util_target: fewer GPU-hours,
--                each freed hour saving the board's idle power (the dynamic energy does the same
--                work either way: power = idle + util x (max - idle)), and its price
--   spot         spot_share of each on-demand GPU resource's spend on Spot: the discount, less
--                the work redone after interruptions (hours, energy, CO2e)
--   scaling      each CodeCarbon job family at its cost-optimal GPU count K* (int_scaling_fits):
--                GPU cost and energy scale with K x T(K); the range follows K*'s range
-- Parameters: [whatif] in meterbook.toml, else assumptions.csv (whatif_*).
with param as (
    select a.assumption_id, coalesce(w.value, a.value) as value, a.low, a.high, a.coefficient_id
    from ref_assumptions a
    left join cfg_whatif w on 'whatif_' || w.param = a.assumption_id
),

p as (
    select
        max(value) filter (where assumption_id = 'whatif_util_target') as util_target,
        max(value) filter (where assumption_id = 'whatif_spot_share') as spot_share,
        max(value) filter (where assumption_id = 'whatif_shift_window_h') as window_h,
        max(value) filter (where assumption_id = 'spot_discount_gpu') as d, max(low) filter (where assumption_id = 'spot_discount_gpu') as d_lo,
        max(high) filter (where assumption_id = 'spot_discount_gpu') as d_hi,
        max(value) filter (where assumption_id = 'spot_interruptions_per_month') as r, max(low) filter (where assumption_id = 'spot_interruptions_per_month') as r_lo,
        max(high) filter (where assumption_id = 'spot_interruptions_per_month') as r_hi,
        max(value) filter (where assumption_id = 'spot_lost_hours_per_preemption') as l, max(low) filter (where assumption_id = 'spot_lost_hours_per_preemption') as l_lo,
        max(high) filter (where assumption_id = 'spot_lost_hours_per_preemption') as l_hi,
        max(value) filter (where assumption_id = 'idle_power_fraction_of_tdp') as idle_f, max(low) filter (where assumption_id = 'idle_power_fraction_of_tdp') as idle_f_lo,
        max(high) filter (where assumption_id = 'idle_power_fraction_of_tdp') as idle_f_hi
    from param
),

resource_cost as (
    select month, resource_id, sum(effective_cost)::double as cost_usd, dsum(gpu_hours) as gpu_hours,
        pick(instance_type) as instance_type
    from int_charges_teams where resource_id is not null group by all
),

region as (
    select month, 'region' as lever, target as scenario, resource_id as subject, team, zone,
        baseline_cost_usd, baseline_energy_kwh, baseline_co2e_kg,
        cost_usd - baseline_cost_usd as cost_usd_delta, cost_usd_low - baseline_cost_usd as cost_usd_delta_low,
        cost_usd_high - baseline_cost_usd as cost_usd_delta_high,
        energy_kwh - baseline_energy_kwh as energy_kwh_delta, energy_kwh_low - baseline_energy_kwh_high as energy_kwh_delta_low,
        energy_kwh_high - baseline_energy_kwh_low as energy_kwh_delta_high,
        co2e_kg - baseline_co2e_kg as co2e_kg_delta, co2e_kg_low - baseline_co2e_kg_high as co2e_kg_delta_low,
        co2e_kg_high - baseline_co2e_kg_low as co2e_kg_delta_high,
        printf('%s on %s in %s instead of %s: on-demand price ratio %.3f; %.0f%% of its hours at %s''s hourly intensity',
               resource_id, instance_type, target, zone, cost_usd / nullif(baseline_cost_usd, 0), 100 * hourly_share, target) as detail,
        []::varchar[] as assumption_ids
    from int_whatif_region
),

shift as (
    select month, 'shift', printf('window +%d h', (select window_h from p)::bigint),
        namespace || coalesce('/' || nullif(pod, ''), ''), pick(team), zone,
        0.0, dsum(facility_energy_kwh), dsum(co2e_kg_before),
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        dsum(co2e_kg_after) - dsum(co2e_kg_before), dsum(co2e_kg_after_low) - dsum(co2e_kg_before_high),
        dsum(co2e_kg_after_high) - dsum(co2e_kg_before_low),
        printf('%d hours of %.1f kWh moved within %s .. %s (%d moved to another hour)', count(*), dsum(energy_kwh),
               strftime(pick(first_hour), '%Y-%m-%d %H:00'), strftime(pick(window_end), '%Y-%m-%d %H:00'),
               count(*) filter (where to_hour <> from_hour)),
        ['assumptions:whatif_shift_window_h']
    from int_whatif_shift
    group by month, zone, namespace, pod
),

workloads as (
    select c.month, c.namespace || coalesce('/' || nullif(c.pod, ''), '') as subject, mode_det(list(c.team)) as team, pick(c.zone) as zone,
        c.resource_id, dsum(c.gpu_hours_observed) as hours,
        dsum(c.gpu_hours_observed * c.util_mean) / nullif(dsum(c.gpu_hours_observed), 0) as util,
        dsum(c.facility_energy_kwh) as facility_kwh, dsum(c.co2e_kg) as co2e_kg,
        -- the CO2e per facility kWh these hours met, and its bounds (PUE undone at each end)
        dsum(c.co2e_kg) / nullif(dsum(c.facility_energy_kwh), 0) as g_kg,
        dsum(c.co2e_kg_low) / nullif(dsum(c.energy_kwh) * pick(z.pue_low), 0) as g_kg_lo,
        dsum(c.co2e_kg_high) / nullif(dsum(c.energy_kwh) * pick(z.pue_high), 0) as g_kg_hi,
        -- the board's idle power: its own spec row, else the assumed share of its TDP
        davg(coalesce(si.value, st.value * (select idle_f from p))) as idle_w,
        davg(coalesce(si.low, st.low * (select idle_f_lo from p))) as idle_w_lo,
        davg(coalesce(si.high, st.high * (select idle_f_hi from p))) as idle_w_hi,
        list_sort(list_distinct(list(coalesce(si.coefficient_id, 'assumptions:idle_power_fraction_of_tdp')))) as ids
    from int_gpu_hour_carbon c
    join gpu_hours g on g.gpu_uuid = c.gpu_uuid and g.hour_start = c.hour_start
    left join (
        select gpu_key(alias) as key, gpu_model from ref_gpu_aliases
        union
        select gpu_key(gpu_model), gpu_model from ref_gpu_specs
    ) a
        on a.key = gpu_key(g.gpu_model_raw)
    left join ref_gpu_specs si on si.gpu_model = a.gpu_model and si.metric = 'idle_w'
    left join ref_gpu_specs st on st.gpu_model = a.gpu_model and st.metric = 'tdp_w'
    left join int_zone_factors z on z.zone = c.zone
    where not c.is_idle and c.util_mean is not null and c.gpu_hours_observed > 0
    group by c.month, c.namespace, c.pod, c.resource_id
),

utilization as (
    select w.month, 'utilization', printf('utilization %.0f%%', 100 * p.util_target), w.subject, w.team, w.zone,
        rc.cost_usd * w.hours / nullif(rc.gpu_hours, 0), w.facility_kwh, w.co2e_kg,
        -w.freed * rc.cost_usd / nullif(rc.gpu_hours, 0), -w.freed * rc.cost_usd / nullif(rc.gpu_hours, 0),
        -w.freed * rc.cost_usd / nullif(rc.gpu_hours, 0),
        -w.freed * w.idle_w * z.pue / getvariable('w_per_kw'), -w.freed * w.idle_w_hi * z.pue_high / getvariable('w_per_kw'),
        -w.freed * w.idle_w_lo * z.pue_low / getvariable('w_per_kw'),
        -w.freed * w.idle_w * z.pue / getvariable('w_per_kw') * w.g_kg,
        -w.freed * w.idle_w_hi * z.pue_high / getvariable('w_per_kw') * w.g_kg_hi,
        -w.freed * w.idle_w_lo * z.pue_low / getvariable('w_per_kw') * w.g_kg_lo,
        printf('%.1f GPU-hours at %.0f%% utilization do the same work in %.1f at %.0f%%: %.1f GPU-hours freed at %.0f W idle',
               w.hours, 100 * w.util, w.hours - w.freed, 100 * p.util_target, w.freed, w.idle_w),
        list_concat(['assumptions:whatif_util_target'], w.ids)
    from (select *, hours * (1 - util / (select util_target from p)) as freed from workloads) w
    cross join p
    left join resource_cost rc on rc.month = w.month and rc.resource_id = w.resource_id
    left join int_zone_factors z on z.zone = w.zone
    where w.util < p.util_target
),

on_demand as (
    select c.month, c.resource_id, pick(c.zone) as zone, mode_det(list(c.resolved_team)) as team,
        sum(c.effective_cost)::double as cost_usd,
        (24 * extract(day from last_day(strptime(c.month, '%Y-%m'))))::double as month_h
    from int_charges_teams c
    where c.gpu_hours > 0 and coalesce(c.pricing_category, 'Standard') in ('Standard', 'On-Demand') and c.commitment_discount_id is null
    group by c.month, c.resource_id
),

resource_energy as (
    select month, resource_id, dsum(facility_energy_kwh) as kwh, dsum(facility_energy_kwh_low) as kwh_lo,
        dsum(facility_energy_kwh_high) as kwh_hi, dsum(co2e_hourly_kg) as co2e, dsum(co2e_hourly_kg_low) as co2e_lo,
        dsum(co2e_hourly_kg_high) as co2e_hi
    from int_energy_lines where resource_id is not null group by all
),

spot as (
    -- rework per Spot hour: interruptions per instance-hour x hours lost each
    select o.month, 'spot', printf('spot share %.0f%%', 100 * p.spot_share), o.resource_id, o.team, o.zone,
        o.cost_usd, e.kwh, e.co2e,
        o.cost_usd * p.spot_share * ((1 - p.d) * (1 + p.r / o.month_h * p.l) - 1),
        o.cost_usd * p.spot_share * ((1 - p.d_hi) * (1 + p.r_lo / o.month_h * p.l_lo) - 1),
        o.cost_usd * p.spot_share * ((1 - p.d_lo) * (1 + p.r_hi / o.month_h * p.l_hi) - 1),
        e.kwh * p.spot_share * p.r / o.month_h * p.l, e.kwh_lo * p.spot_share * p.r_lo / o.month_h * p.l_lo,
        e.kwh_hi * p.spot_share * p.r_hi / o.month_h * p.l_hi,
        e.co2e * p.spot_share * p.r / o.month_h * p.l, e.co2e_lo * p.spot_share * p.r_lo / o.month_h * p.l_lo,
        e.co2e_hi * p.spot_share * p.r_hi / o.month_h * p.l_hi,
        printf('%.0f%% of %.2f on Spot at %.0f%% off; %.2f%% of its hours redone after interruptions',
               100 * p.spot_share, o.cost_usd, 100 * p.d, 100 * p.r / o.month_h * p.l),
        ['assumptions:whatif_spot_share', 'assumptions:spot_discount_gpu', 'assumptions:spot_interruptions_per_month',
         'assumptions:spot_lost_hours_per_preemption']
    from on_demand o
    cross join p
    left join resource_energy e on e.month = o.month and e.resource_id = o.resource_id
),

last_run as (
    -- the family's energy at the GPU count it used: its latest run's GPU energy (CodeCarbon's PUE undone)
    select strftime(r.end_utc, '%Y-%m') as month, r.project, arg_max(r.gpu_energy_kwh / coalesce(nullif(r.pue, 0), 1), r.end_utc) as it_kwh
    from run_month r where r.project is not null and r.gpu_energy_kwh > 0 group by all
),

fits as (
    select f.*, l.it_kwh,
        f.k_used * (f.serial_fraction + (1 - f.serial_fraction) / f.k_used + f.comm_fraction * (f.k_used - 1)) as kt_used,
        [f.k_opt, f.k_opt_low, f.k_opt_high] as ks
    from int_scaling_fits f
    join last_run l using (month, project)
    where f.k_opt is not null
),

scaled as (
    select *, list_min(ratio) - 1 as r_min, list_max(ratio) - 1 as r_max
    from (select f.*, list_transform(ks, lambda k: k * (f.serial_fraction + (1 - f.serial_fraction) / k
                                                        + f.comm_fraction * (k - 1)) / f.kt_used) as ratio
          from fits f)
),

scaling as (
    -- one wall-clock T1 per K: cost and energy both go as K x T(K); K*'s range gives the bounds
    select s.month, 'scaling', printf('K* = %d GPUs', s.k_opt), s.project, null, z.zone,
        s.price_usd_per_gpu_h * s.t1_h * s.kt_used, s.it_kwh * z.pue, s.it_kwh * z.pue * z.intensity_g_per_kwh / getvariable('g_per_kg'),
        s.price_usd_per_gpu_h * s.t1_h * s.kt_used * (s.ratio[1] - 1),
        s.price_usd_per_gpu_h * s.t1_h * s.kt_used * s.r_min,
        s.price_usd_per_gpu_h * s.t1_h * s.kt_used * s.r_max,
        s.it_kwh * z.pue * (s.ratio[1] - 1),
        -- bounds: every pairing of the PUE's (and intensity's) ends with K*'s
        s.it_kwh * list_min([z.pue_low * s.r_min, z.pue_low * s.r_max, z.pue_high * s.r_min, z.pue_high * s.r_max]),
        s.it_kwh * list_max([z.pue_low * s.r_min, z.pue_low * s.r_max, z.pue_high * s.r_min, z.pue_high * s.r_max]),
        s.it_kwh * z.pue * z.intensity_g_per_kwh / getvariable('g_per_kg') * (s.ratio[1] - 1),
        s.it_kwh / getvariable('g_per_kg') * list_min([z.pue_low * z.intensity_g_per_kwh_low * s.r_min,
            z.pue_low * z.intensity_g_per_kwh_low * s.r_max, z.pue_high * z.intensity_g_per_kwh_high * s.r_min,
            z.pue_high * z.intensity_g_per_kwh_high * s.r_max]),
        s.it_kwh / getvariable('g_per_kg') * list_max([z.pue_low * z.intensity_g_per_kwh_low * s.r_min,
            z.pue_low * z.intensity_g_per_kwh_low * s.r_max, z.pue_high * z.intensity_g_per_kwh_high * s.r_min,
            z.pue_high * z.intensity_g_per_kwh_high * s.r_max]),
        printf('%s at %d GPUs instead of %d (K* range %d-%d): wall-clock %.1f h instead of %.1f h per run',
               s.project, s.k_opt, s.k_used, s.k_opt_low, s.k_opt_high,
               s.t1_h * s.ratio[1] * s.kt_used / s.k_opt, s.t1_h * s.kt_used / s.k_used),
        ['assumptions:wallclock_value_usd_per_h']
    from scaled s
    join int_zone_factors z on z.zone = nullif(getvariable('default_zone'), '')
)

select * from region
union all
select * from shift
union all
select * from utilization
union all
select * from spot
union all
select * from scaling
