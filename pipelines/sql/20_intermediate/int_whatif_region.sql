-- Grain: month x target zone x billed resource. The what-if replay's region lever: the month's
-- measured GPU-hours of each resource run in another region ([whatif] regions, else every
-- region instance_prices.csv prices) that offers its instance type. Energy: the same IT energy
-- at the target's PUE; CO2e: hour by hour at the target's intensity (its hourly series where
-- loaded, else its annual factor); cost: what the resource cost this month x the ratio of the
-- two regions' on-demand prices (a discount on the bill carries over). Bounds: the scenario's
-- low end against the baseline's high end and back (independent assumptions).
with resource_hours as (
    select month, resource_id, zone, hour_start, dsum(energy_kwh) as energy_kwh, dsum(facility_energy_kwh) as facility_energy_kwh,
        dsum(co2e_kg) as co2e_kg, dsum(co2e_kg_low) as co2e_kg_low, dsum(co2e_kg_high) as co2e_kg_high
    from int_gpu_hour_carbon
    where resource_id is not null and zone is not null and energy_kwh > 0
    group by month, resource_id, zone, hour_start
),

billed as (
    select month, resource_id, pick(instance_type) as instance_type, sum(effective_cost)::double as cost_usd,
        mode_det(list(resolved_team)) as team       -- the resource's team, as int_energy_base has it
    from int_charges_teams
    where resource_id is not null and instance_type is not null
    group by month, resource_id
),

priced as (
    select cloud || ':' || region as zone, lower(instance_type) as instance_type, value, low, high
    from ref_instance_prices
    where pricing = 'on_demand'
),

moves as (
    select distinct r.month, r.resource_id, r.zone, b.instance_type, b.cost_usd, b.team, t.zone as target,
        here.value as price_here, there.value as price_there, there.low as price_there_low, there.high as price_there_high
    from resource_hours r
    join billed b on b.month = r.month and b.resource_id = r.resource_id
    join priced here on here.zone = r.zone and here.instance_type = lower(b.instance_type)
    join int_zone_factors t on t.zone <> r.zone
        and (t.zone in (select zone from cfg_whatif_regions) or not exists (select 1 from cfg_whatif_regions))
    join priced there on there.zone = t.zone and there.instance_type = lower(b.instance_type)
)

select
    m.month, m.target, m.resource_id, m.zone, m.instance_type, m.team,
    m.cost_usd as baseline_cost_usd, dsum(r.facility_energy_kwh) as baseline_energy_kwh,
    dsum(r.co2e_kg) as baseline_co2e_kg, dsum(r.co2e_kg_low) as baseline_co2e_kg_low, dsum(r.co2e_kg_high) as baseline_co2e_kg_high,
    dsum(r.energy_kwh) * pick(z.pue) as energy_kwh, dsum(r.energy_kwh) * pick(z.pue_low) as energy_kwh_low,
    dsum(r.energy_kwh) * pick(z.pue_high) as energy_kwh_high,
    dsum(r.energy_kwh) * pick(hz.pue_low) as baseline_energy_kwh_low,
    dsum(r.energy_kwh) * pick(hz.pue_high) as baseline_energy_kwh_high,
    dsum(r.energy_kwh * z.pue * coalesce(g.intensity_g_per_kwh, z.intensity_g_per_kwh)) / getvariable('g_per_kg') as co2e_kg,
    dsum(r.energy_kwh * z.pue_low * coalesce(g.intensity_g_per_kwh, z.intensity_g_per_kwh_low)) / getvariable('g_per_kg') as co2e_kg_low,
    dsum(r.energy_kwh * z.pue_high * coalesce(g.intensity_g_per_kwh, z.intensity_g_per_kwh_high)) / getvariable('g_per_kg') as co2e_kg_high,
    count(g.hour_start) / count(*) as hourly_share,
    m.cost_usd * m.price_there / m.price_here as cost_usd,
    m.cost_usd * m.price_there_low / m.price_here as cost_usd_low,
    m.cost_usd * m.price_there_high / m.price_here as cost_usd_high
from moves m
join resource_hours r on r.month = m.month and r.resource_id = m.resource_id and r.zone = m.zone
join int_zone_factors z on z.zone = m.target
join int_zone_factors hz on hz.zone = m.zone
left join int_grid_hours g on g.zone = m.target and g.hour_start = r.hour_start
group by m.month, m.target, m.resource_id, m.zone, m.instance_type, m.team, m.cost_usd, m.price_there, m.price_here,
    m.price_there_low, m.price_there_high
