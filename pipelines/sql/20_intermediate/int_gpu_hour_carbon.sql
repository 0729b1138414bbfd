-- Grain: one int_gpu_workloads row (GPU x UTC hour x workload). Its zone (the billed resource's
-- region, else the configured default zone), facility energy (IT energy x the zone's PUE) and
-- hourly-matched location-based CO2e: the zone's grid intensity for that hour where a grid-hourly
-- series gives it (intensity_tier 'hourly'), else the zone's annual factor ('annual'). Ranges:
-- PUE low/high, and the annual factor's low/high where it stands in (an hourly figure is used as
-- published). int_energy_base sums these rows; the what-if replay (int_whatif_shift) moves them.
with resources as (
    select resource_id, month, pick(zone) as zone
    from int_charges_teams
    where resource_id is not null
    group by resource_id, month
),

placed as (
    select w.*, strftime(w.hour_start, '%Y-%m') as month,
        coalesce(r.zone, nullif(getvariable('default_zone'), '')) as zone
    from int_gpu_workloads w
    left join resources r on r.resource_id = w.resource_id and r.month = strftime(w.hour_start, '%Y-%m')
)

select
    p.*,
    case when h.intensity_g_per_kwh is not null then 'hourly' else 'annual' end as intensity_tier,
    coalesce(h.intensity_g_per_kwh, z.intensity_g_per_kwh) as intensity_g_per_kwh,
    p.energy_kwh * z.pue as facility_energy_kwh,
    p.energy_kwh * z.pue * coalesce(h.intensity_g_per_kwh, z.intensity_g_per_kwh) / getvariable('g_per_kg') as co2e_kg,
    p.energy_kwh * z.pue_low * coalesce(h.intensity_g_per_kwh, z.intensity_g_per_kwh_low) / getvariable('g_per_kg') as co2e_kg_low,
    p.energy_kwh * z.pue_high * coalesce(h.intensity_g_per_kwh, z.intensity_g_per_kwh_high) / getvariable('g_per_kg') as co2e_kg_high
from placed p
left join int_zone_factors z on z.zone = p.zone
left join int_grid_hours h on h.zone = p.zone and h.hour_start = p.hour_start
