-- Grid intensity, PUE, grid area and residual mix per zone ('aws:us-east-1'): the zones charges
-- use, the configured default, and the what-if replay's target regions ([whatif] regions, else
-- every region instance_prices.csv prices). Unknown zones fall back to the unknown-facility PUE.
-- Location-based intensity: the most specific grid average the reference data holds, as the GHG
-- Protocol Scope 2 Guidance orders them (regional or subnational grid, then national, the world
-- last): the zone's own cloud_region row, else its grid zone's own row, else its country's,
-- else the world's. intensity_id names the row used (its range with it); intensity_fallback is
-- true when that row is coarser than the zone's grid (its country's or the world's).
-- grid_zone / operator_code / country: how hourly series and instruments name the zone's grid
-- ([carbon.grid_zones] first, then grid_zones.csv; a mapped zone's country is its grid zone's).
-- Residual mix (market-based Scope 2, for energy no instrument or supplier factor covers): the zone's own residual_mix row, else its
-- country's, newest year; null when neither exists.
with zones as (
    select distinct zone from int_charges_teams where zone is not null
    union
    select getvariable('default_zone') where getvariable('default_zone') <> ''
    union
    select zone from cfg_whatif_regions
    union
    select distinct cloud || ':' || region from ref_instance_prices where not exists (select 1 from cfg_whatif_regions)
),

location_intensity as (
    select zone_kind, zone_id, arg_max(value, year) as value, arg_max(low, year) as low, arg_max(high, year) as high,
           arg_max(coefficient_id, year) as coefficient_id
    from ref_grid_intensity
    where zone_kind <> 'world' and basis = 'location'
    group by zone_kind, zone_id
),

world as (
    select arg_max(value, year) as value, arg_max(low, year) as low, arg_max(high, year) as high,
           arg_max(coefficient_id, year) as coefficient_id
    from ref_grid_intensity
    where zone_kind = 'world' and basis = 'location'
),

residual as (
    select zone_kind, zone_id, arg_max(value, year) as value, arg_max(low, year) as low, arg_max(high, year) as high,
           arg_max(coefficient_id, year) as coefficient_id, max(year)::integer as year, arg_max(source, year) as source
    from ref_grid_intensity
    where basis = 'residual_mix'
    group by zone_kind, zone_id
),

grid_areas as (
    -- an Electricity Maps zone id starts with its ISO 3166-1 alpha-2 country ('US-MIDA-PJM', 'DE',
    -- 'DK-DK1'): a zone the config maps takes the country of its grid zone, as the residual mix is
    -- published per country
    select z.zone, coalesce(c.grid_zone, g.grid_zone) as grid_zone, nullif(g.operator_code, '') as operator_code,
        coalesce(
            nullif(regexp_extract(upper(c.grid_zone), '^([A-Z]{2})(-|$)', 1), ''),
            nullif(g.country, ''),
            nullif(regexp_extract(upper(g.grid_zone), '^([A-Z]{2})(-|$)', 1), '')) as country
    from zones z
    left join cfg_grid_zones c on c.zone = z.zone
    left join ref_grid_zones g on g.zone = z.zone
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
    -- the one unknown-facility default, the same row an owned cluster's cost pool reads
    cross join (select * from ref_assumptions where assumption_id = 'pue_unknown') u
)

select
    z.zone,
    coalesce(i.value, ig.value, ic.value, w.value) as intensity_g_per_kwh,
    coalesce(i.low, ig.low, ic.low, w.low) as intensity_g_per_kwh_low,
    coalesce(i.high, ig.high, ic.high, w.high) as intensity_g_per_kwh_high,
    coalesce(i.coefficient_id, ig.coefficient_id, ic.coefficient_id, w.coefficient_id) as intensity_id,
    i.value is null and ig.value is null as intensity_fallback,
    p.pue, p.pue_low, p.pue_high, p.pue_id,
    g.grid_zone, g.operator_code, g.country,
    coalesce(rz.value, rc.value) as residual_g_per_kwh,
    coalesce(rz.low, rc.low) as residual_g_per_kwh_low,
    coalesce(rz.high, rc.high) as residual_g_per_kwh_high,
    coalesce(rz.coefficient_id, rc.coefficient_id) as residual_id,
    coalesce(rz.year, rc.year) as residual_year,
    coalesce(rz.source, rc.source) as residual_source
from zones z
cross join world w
left join location_intensity i on i.zone_kind = 'cloud_region' and i.zone_id = z.zone
left join pue_by_zone p on p.zone = z.zone
left join grid_areas g on g.zone = z.zone
-- a grid zone named as a country ('DE', 'FR') or a US state is its own row; country and state
-- ids never coincide ('US' against 'US-CA'), so this matches one row at most
left join location_intensity ig on ig.zone_kind in ('country', 'us_state') and ig.zone_id = upper(g.grid_zone)
left join location_intensity ic on ic.zone_kind = 'country' and ic.zone_id = g.country
left join residual rz on rz.zone_kind = 'cloud_region' and rz.zone_id = z.zone
left join residual rc on rc.zone_kind = 'country' and rc.zone_id = g.country
