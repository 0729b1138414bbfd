-- Grid intensity and PUE per zone ('aws:us-east-1') used by charges or configured as default.
-- Unknown zones fall back to the world intensity and the unknown-facility PUE, flagged.
with zones as (
    select distinct zone from int_charges_teams where zone is not null
    union
    select getvariable('default_zone') where getvariable('default_zone') <> ''
),

region_intensity as (
    select zone_id, arg_max(value, year) as value, arg_max(low, year) as low, arg_max(high, year) as high,
           arg_max(coefficient_id, year) as coefficient_id
    from ref_grid_intensity
    where zone_kind = 'cloud_region' and basis = 'location'
    group by zone_id
),

world as (
    select arg_max(value, year) as value, arg_max(low, year) as low, arg_max(high, year) as high,
           arg_max(coefficient_id, year) as coefficient_id
    from ref_grid_intensity
    where zone_kind = 'world' and basis = 'location'
),

pue_by_zone as (
    select z.zone,
        coalesce(r.value, p.value, u.value) as pue,
        coalesce(r.low, p.low, u.low) as pue_low,
        coalesce(r.high, p.high, u.high) as pue_high,
        coalesce(r.coefficient_id, p.coefficient_id, u.coefficient_id) as pue_id
    from zones z
    left join ref_pue r on r.provider || ':' || r.region = z.zone and r.region <> ''
    left join ref_pue p on p.provider = split_part(z.zone, ':', 1) and p.region = '' and p.facility_type = 'hyperscale'
    cross join (select * from ref_pue where provider = '' and facility_type = 'unknown') u
)

select
    z.zone,
    coalesce(i.value, w.value) as intensity_g_per_kwh,
    coalesce(i.low, w.low) as intensity_g_per_kwh_low,
    coalesce(i.high, w.high) as intensity_g_per_kwh_high,
    coalesce(i.coefficient_id, w.coefficient_id) as intensity_id,
    i.value is null as intensity_fallback,
    p.pue, p.pue_low, p.pue_high, p.pue_id
from zones z
cross join world w
left join region_intensity i on i.zone_id = z.zone
left join pue_by_zone p on p.zone = z.zone
