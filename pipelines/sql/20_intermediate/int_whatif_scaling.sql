-- Grain: month x job family (CodeCarbon project), in the shape of whatif_month (which unions it
-- in): the scaling lever. Each family at its cost-optimal GPU count K* (int_scaling_fits): GPU
-- cost and energy scale with K x T(K), one wall-clock T1 per K; K*'s range gives the bounds.
with last_run as (
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
)

select s.month, 'scaling' as lever, printf('K* = %d GPUs', s.k_opt) as scenario, s.project as subject, null::varchar as team, z.zone,
    s.price_usd_per_gpu_h * s.t1_h * s.kt_used as baseline_cost_usd, s.it_kwh * z.pue as baseline_energy_kwh,
    s.it_kwh * z.pue * z.intensity_g_per_kwh / getvariable('g_per_kg') as baseline_co2e_kg,
    s.price_usd_per_gpu_h * s.t1_h * s.kt_used * (s.ratio[1] - 1) as cost_usd_delta,
    s.price_usd_per_gpu_h * s.t1_h * s.kt_used * s.r_min as cost_usd_delta_low,
    s.price_usd_per_gpu_h * s.t1_h * s.kt_used * s.r_max as cost_usd_delta_high,
    s.it_kwh * z.pue * (s.ratio[1] - 1) as energy_kwh_delta,
    -- bounds: every pairing of the PUE's (and intensity's) ends with K*'s
    s.it_kwh * list_min([z.pue_low * s.r_min, z.pue_low * s.r_max, z.pue_high * s.r_min, z.pue_high * s.r_max]) as energy_kwh_delta_low,
    s.it_kwh * list_max([z.pue_low * s.r_min, z.pue_low * s.r_max, z.pue_high * s.r_min, z.pue_high * s.r_max]) as energy_kwh_delta_high,
    s.it_kwh * z.pue * z.intensity_g_per_kwh / getvariable('g_per_kg') * (s.ratio[1] - 1) as co2e_kg_delta,
    s.it_kwh / getvariable('g_per_kg') * list_min([z.pue_low * z.intensity_g_per_kwh_low * s.r_min,
        z.pue_low * z.intensity_g_per_kwh_low * s.r_max, z.pue_high * z.intensity_g_per_kwh_high * s.r_min,
        z.pue_high * z.intensity_g_per_kwh_high * s.r_max]) as co2e_kg_delta_low,
    s.it_kwh / getvariable('g_per_kg') * list_max([z.pue_low * z.intensity_g_per_kwh_low * s.r_min,
        z.pue_low * z.intensity_g_per_kwh_low * s.r_max, z.pue_high * z.intensity_g_per_kwh_high * s.r_min,
        z.pue_high * z.intensity_g_per_kwh_high * s.r_max]) as co2e_kg_delta_high,
    printf('%s at %d GPUs instead of %d (K* range %d-%d): wall-clock %.1f h instead of %.1f h per run',
           s.project, s.k_opt, s.k_used, s.k_opt_low, s.k_opt_high,
           s.t1_h * s.ratio[1] * s.kt_used / s.k_opt, s.t1_h * s.kt_used / s.k_used) as detail,
    ['assumptions:wallclock_value_usd_per_h'] as assumption_ids
from scaled s
join int_zone_factors z on z.zone = nullif(getvariable('default_zone'), '')
