-- Energy and location-based CO2e per month, team, billed resource and source (grain: month x
-- team x resource x zone x basis x idle), before market-based CO2e (int_market_claims needs these
-- sums; int_energy_lines adds it). Measured: each GPU-hour's workload share goes to its
-- namespace's team (team null: a namespace nothing maps) and to the billed resource
-- int_gpu_workloads resolved for its host, in the zone int_gpu_hour_carbon placed it; idle time
-- has team null and is_idle, and is shared by the [allocation] idle rule downstream. Estimated
-- lines carry the billed resource's team.
-- Estimated: billed GPU-hours that no telemetry covers x TDP x an assumed power fraction (an
-- owned cluster's idle capacity at the idle fraction). A Slurm job's GPU-hours on a cluster
-- host's telemetry are its own (int_cluster_gpu_claims: hpc_job, node_share); a job no series
-- reaches takes its DCGM job statistics, else Slurm's node energy (int_cluster_job_energy).
-- CO2e (co2e_kg): facility energy x the zone's annual grid intensity. co2e_hourly_kg: the same
-- energy hour by hour at the zone's hourly intensity where a series gives it, else the annual
-- factor (int_gpu_hour_carbon); facility_energy_kwh_hourly is the part with an hourly figure.
-- Estimated energy has no hours: its hourly-matched CO2e is its annual one.
-- Ranges are interval bounds over the PUE, intensity and power assumptions (low x low, high x high).
with resources as (
    select resource_id, mode_det(list(resolved_team)) as team, pick(zone) as zone, pick(gpu_model) as gpu_model,
           month, dsum(gpu_hours) as gpu_hours_billed,
           -- an owned cluster's idle capacity (int_cost_pool_lines): idle GPUs still draw power
           bool_or(coalesce(line_item_type = 'IdleCapacity' and provider = 'owned', false)) as is_idle
    from int_charges_teams
    where resource_id is not null
    group by resource_id, month
),

measured as (
    -- a Slurm job's part of a cluster host's GPU-hours has its job's team (its account's)
    select
        m.month, case when m.cluster_claim in ('hpc_job', 'node_share') then r.team else m.team end as team,
        m.is_idle and coalesce(m.cluster_claim, 'idle') = 'idle' as is_idle, m.zone, m.resource_id, m.energy_kwh, m.gpu_hours_observed, m.gpu_hours_energy_known,
        m.gpu_hours_observed * m.util_mean as util_weighted, case when m.cluster_claim in ('hpc_job', 'node_share') then m.cluster_claim else m.energy_tier end as energy_tier,
        m.intensity_tier, m.facility_energy_kwh, m.co2e_kg, m.co2e_kg_low, m.co2e_kg_high
    from int_gpu_hour_carbon m
    left join resources r on r.resource_id = m.resource_id and r.month = m.month
),

covered as (
    -- billed hours whose energy telemetry already holds (observed, or spread over a counter gap)
    select resource_id, month, dsum(gpu_hours_energy_known) as gpu_hours_energy_known
    from measured where resource_id is not null group by all
),

gpu_power as (
    select s.gpu_model, s.value as tdp_w, s.low as tdp_w_low, s.high as tdp_w_high, s.coefficient_id as tdp_id
    from ref_gpu_specs s where s.metric = 'tdp_w'
),

fraction as (
    -- a busy GPU's draw, and an idle one's (an owned cluster's idle capacity)
    select assumption_id, value, low, high, coefficient_id from ref_assumptions
    where assumption_id in ('gpu_power_fraction_of_tdp', 'idle_power_fraction_of_tdp')
),

estimated as (
    select
        r.month, case when not r.is_idle then r.team end as team, r.is_idle, r.zone, r.resource_id,
        greatest(r.gpu_hours_billed - coalesce(c.gpu_hours_energy_known, 0), 0) as gpu_hours_estimated,
        p.tdp_w, p.tdp_w_low, p.tdp_w_high, p.tdp_id
    from resources r
    left join covered c using (resource_id, month)
    left join gpu_power p on p.gpu_model = r.gpu_model
    -- a Slurm job with DCGM job statistics or Slurm's node energy has its energy from them
    left join int_cluster_job_energy j on j.resource_id = r.resource_id and j.month = r.month
    where r.gpu_hours_billed > 0 and j.resource_id is null
),

unioned as (
    select month, team, is_idle, zone, resource_id, 'measured' as basis,
        dsum(energy_kwh) as it_energy_kwh, dsum(energy_kwh) as it_energy_kwh_low, dsum(energy_kwh) as it_energy_kwh_high,
        dsum(gpu_hours_observed) as gpu_hours, dsum(util_weighted) as util_weighted,
        list_sort(list_distinct(list(energy_tier))) as tiers, []::varchar[] as assumption_ids,
        dsum(co2e_kg) as hourly_co2e_kg, dsum(co2e_kg_low) as hourly_co2e_kg_low, dsum(co2e_kg_high) as hourly_co2e_kg_high,
        coalesce(sum(facility_energy_kwh::decimal(38, 12)) filter (where intensity_tier = 'hourly'), 0)::double
            as facility_energy_kwh_hourly
    from measured group by month, team, is_idle, zone, resource_id
    union all
    select e.month, e.team, e.is_idle, e.zone, e.resource_id, 'estimated',
        dsum(e.gpu_hours_estimated * e.tdp_w * f.value) / getvariable('w_per_kw'),
        dsum(e.gpu_hours_estimated * e.tdp_w_low * f.low) / getvariable('w_per_kw'),
        dsum(e.gpu_hours_estimated * e.tdp_w_high * f.high) / getvariable('w_per_kw'),
        dsum(e.gpu_hours_estimated), null,
        ['tdp_model'], list_sort(list_distinct(flatten(list([e.tdp_id, f.coefficient_id])))),
        null, null, null, 0
    from estimated e
    join fraction f on f.assumption_id = case when e.is_idle then 'idle_power_fraction_of_tdp' else 'gpu_power_fraction_of_tdp' end
    where e.gpu_hours_estimated > 0
    group by e.month, e.team, e.is_idle, e.zone, e.resource_id
    union all
    select j.month, r.team, false, r.zone, j.resource_id, j.basis, j.it_energy_kwh, j.it_energy_kwh_low, j.it_energy_kwh_high,
        j.gpu_hours, null, [j.tier], []::varchar[], null, null, null, 0
    from int_cluster_job_energy j
    join resources r on r.resource_id = j.resource_id and r.month = j.month
)

select
    u.* exclude (u.hourly_co2e_kg, u.hourly_co2e_kg_low, u.hourly_co2e_kg_high),
    u.it_energy_kwh * z.pue as facility_energy_kwh,
    u.it_energy_kwh_low * z.pue_low as facility_energy_kwh_low,
    u.it_energy_kwh_high * z.pue_high as facility_energy_kwh_high,
    u.it_energy_kwh * z.pue * z.intensity_g_per_kwh / getvariable('g_per_kg') as co2e_kg,
    u.it_energy_kwh_low * z.pue_low * z.intensity_g_per_kwh_low / getvariable('g_per_kg') as co2e_kg_low,
    u.it_energy_kwh_high * z.pue_high * z.intensity_g_per_kwh_high / getvariable('g_per_kg') as co2e_kg_high,
    list_distinct(list_concat(u.assumption_ids, [z.pue_id, z.intensity_id])) as all_assumption_ids,
    -- the allocation group a line belongs to (int_alloc_sources sums lines by it; the marts
    -- find a line's group by it): one spelling, here
    concat_ws('|', 'energy', u.basis, 'resource=' || coalesce(u.resource_id, ''),
              case when u.is_idle then 'idle' else 'team=' || coalesce(u.team, '') end,
              'month=' || u.month) as source_group,
    z.intensity_fallback,
    coalesce(u.hourly_co2e_kg, u.it_energy_kwh * z.pue * z.intensity_g_per_kwh / getvariable('g_per_kg')) as co2e_hourly_kg,
    coalesce(u.hourly_co2e_kg_low, u.it_energy_kwh_low * z.pue_low * z.intensity_g_per_kwh_low / getvariable('g_per_kg'))
        as co2e_hourly_kg_low,
    coalesce(u.hourly_co2e_kg_high, u.it_energy_kwh_high * z.pue_high * z.intensity_g_per_kwh_high / getvariable('g_per_kg'))
        as co2e_hourly_kg_high
from unioned u
left join int_zone_factors z on z.zone = u.zone
