-- Grain: month x subject (namespace/pod), in the shape of whatif_month (which unions it in): the
-- utilization lever. Each workload under util_target does its work at util_target: fewer
-- GPU-hours, each freed hour saving the board's idle power (the dynamic energy does the same work
-- either way: power = idle + util x (max - idle)), and its price.
with p as (
    select
        max(value) filter (where assumption_id = 'whatif_util_target') as util_target,
        max(value) filter (where assumption_id = 'idle_power_fraction_of_tdp') as idle_f,
        max(low) filter (where assumption_id = 'idle_power_fraction_of_tdp') as idle_f_lo,
        max(high) filter (where assumption_id = 'idle_power_fraction_of_tdp') as idle_f_hi
    from int_whatif_params
),

resource_cost as (
    select month, resource_id, sum(effective_cost)::double as cost_usd, dsum(gpu_hours) as gpu_hours,
        pick(instance_type) as instance_type
    from int_charges_teams where resource_id is not null group by all
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
    join int_gpu_hours g on g.gpu_uuid = c.gpu_uuid and g.hour_start = c.hour_start
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
)

select w.month, 'utilization' as lever, printf('utilization %.0f%%', 100 * p.util_target) as scenario, w.subject, w.team, w.zone,
    rc.cost_usd * w.hours / nullif(rc.gpu_hours, 0) as baseline_cost_usd, w.facility_kwh as baseline_energy_kwh,
    w.co2e_kg as baseline_co2e_kg,
    -w.freed * rc.cost_usd / nullif(rc.gpu_hours, 0) as cost_usd_delta,
    -w.freed * rc.cost_usd / nullif(rc.gpu_hours, 0) as cost_usd_delta_low,
    -w.freed * rc.cost_usd / nullif(rc.gpu_hours, 0) as cost_usd_delta_high,
    -w.freed * w.idle_w * z.pue / getvariable('w_per_kw') as energy_kwh_delta,
    -w.freed * w.idle_w_hi * z.pue_high / getvariable('w_per_kw') as energy_kwh_delta_low,
    -w.freed * w.idle_w_lo * z.pue_low / getvariable('w_per_kw') as energy_kwh_delta_high,
    -w.freed * w.idle_w * z.pue / getvariable('w_per_kw') * w.g_kg as co2e_kg_delta,
    -w.freed * w.idle_w_hi * z.pue_high / getvariable('w_per_kw') * w.g_kg_hi as co2e_kg_delta_low,
    -w.freed * w.idle_w_lo * z.pue_low / getvariable('w_per_kw') * w.g_kg_lo as co2e_kg_delta_high,
    printf('%.1f GPU-hours at %.0f%% utilization do the same work in %.1f at %.0f%%: %.1f GPU-hours freed at %.0f W idle',
           w.hours, 100 * w.util, w.hours - w.freed, 100 * p.util_target, w.freed, w.idle_w) as detail,
    list_concat(['assumptions:whatif_util_target'], w.ids) as assumption_ids
from (select *, hours * (1 - util / (select util_target from p)) as freed from workloads) w
cross join p
left join resource_cost rc on rc.month = w.month and rc.resource_id = w.resource_id
left join int_zone_factors z on z.zone = w.zone
where w.util < p.util_target
