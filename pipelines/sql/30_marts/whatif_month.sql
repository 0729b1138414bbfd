-- Grain: month x lever x scenario x subject. The month's measured GPU-hours replayed under one
-- lever at a time, as deltas against what happened (negative: a saving), each with bounds:
-- cost in the billing currency, facility energy (kWh), CO2e (kg, location-based, hour by hour
-- where a series gives it). `meterbook whatif` prints it; the audit's what-if section reads it.
--   region       int_whatif_region: the same work in another region (scenario = its zone)
--   shift        int_whatif_shift: deferrable jobs in the cleanest hours of their window
--   utilization  int_whatif_utilization: each workload under util_target at util_target
--   spot         int_whatif_spot: spot_share of each on-demand GPU resource's spend on Spot
--   scaling      int_whatif_scaling: each CodeCarbon job family at its cost-optimal GPU count K*
-- Parameters: [whatif] in meterbook.toml, else assumptions.csv (whatif_*).
with region as (
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
    select month, 'shift', printf('window +%d h', (select value from int_whatif_params where assumption_id = 'whatif_shift_window_h')::bigint),
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
)

select * from region
union all
select * from shift
union all
select * from int_whatif_utilization
union all
select * from int_whatif_spot
union all
select * from int_whatif_scaling
