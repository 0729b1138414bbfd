-- Grain: zone x UTC hour. The grid carbon intensity a zone's energy meets in an hour, from every
-- loaded grid-hourly series that names the zone: by the zone itself, its grid zone or its
-- operator code (int_zone_factors; case ignored). The configured factor type (variable
-- hourly_factor_type: lifecycle, like the annual factors, or direct) is used where a series gives
-- it, else a series' unspecified figures. Finer series (15 minutes) are averaged to the hour, and
-- an hour two files both give is their mean (n_files says so); an hour no series gives is not
-- here, and its energy takes the zone's annual factor (int_gpu_hour_carbon).
with matched as (
    select z.zone, date_trunc('hour', g.hour_start) as hour_start, g.file_id, g.factor_type, g.intensity_g_per_kwh
    from grid_hours g
    join int_zone_factors z on lower(g.zone) in (lower(z.zone), lower(z.grid_zone), lower(z.operator_code))
    where g.factor_type in (getvariable('hourly_factor_type'), 'unspecified')
),

preferred as (
    select *
    from matched
    qualify rank() over (partition by zone, hour_start order by factor_type = 'unspecified') = 1
)

select
    zone,
    hour_start,
    -- an order-free mean (dsum): the same hours give the same figure whatever else is loaded
    dsum(intensity_g_per_kwh) / count(*) as intensity_g_per_kwh,
    pick(factor_type) as factor_type,
    count(distinct file_id) as n_files
from preferred
group by zone, hour_start
