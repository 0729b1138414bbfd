-- Grain: month x zone. The zone's facility energy and its CO2e three ways, side by side:
-- location-based on the zone's annual factor (co2e_kg, as the chargeback has always shown it),
-- location-based hour by hour (co2e_hourly_kg: each GPU-hour at its zone's intensity for that
-- hour where a grid-hourly series gives it, else the annual factor), and market-based
-- (co2e_market_kg: instruments, supplier factors, residual mix; null when not available, with
-- the reason; the zone's Scope 2 and cloud energy together, each on its own factor:
-- int_market_factors). Sums of the same int_energy_lines allocation_lines splits over teams, unrounded.
-- hours_hourly / hours_annual: distinct UTC hours with measured energy in the zone that had an
-- hourly figure / fell back to the annual one; facility_energy_kwh_hourly the energy of the first
-- kind (estimated energy has no hours and is always annual).
with lines as (
    select month, zone,
        dsum(facility_energy_kwh) as facility_energy_kwh,
        dsum(facility_energy_kwh_low) as facility_energy_kwh_low,
        dsum(facility_energy_kwh_high) as facility_energy_kwh_high,
        dsum(co2e_kg) as co2e_kg, dsum(co2e_kg_low) as co2e_kg_low, dsum(co2e_kg_high) as co2e_kg_high,
        dsum(co2e_hourly_kg) as co2e_hourly_kg, dsum(co2e_hourly_kg_low) as co2e_hourly_kg_low,
        dsum(co2e_hourly_kg_high) as co2e_hourly_kg_high,
        dsum(facility_energy_kwh_hourly) as facility_energy_kwh_hourly
    from int_energy_lines
    where zone is not null
    group by month, zone
),

hours as (
    select month, zone,
        count(distinct hour_start) filter (where intensity_tier = 'hourly') as hours_hourly,
        count(distinct hour_start) filter (where intensity_tier = 'annual') as hours_annual
    from int_gpu_hour_carbon
    where energy_kwh > 0 and zone is not null
    group by month, zone
),

market as (
    -- a zone's Scope 2 and cloud energy have factors apart (instruments cover Scope 2 energy
    -- only); the zone's figure is their sum, not available when either is
    select month, zone,
        case when bool_and(co2e_market_kg is not null) then dsum(co2e_market_kg) end as co2e_market_kg,
        case when bool_and(co2e_market_kg_low is not null) then dsum(co2e_market_kg_low) end as co2e_market_kg_low,
        case when bool_and(co2e_market_kg_high is not null) then dsum(co2e_market_kg_high) end as co2e_market_kg_high,
        case when bool_and(co2e_market_kg is not null) then dsum(co2e_market_kg) * getvariable('g_per_kg')
            / nullif(dsum(facility_energy_kwh), 0) end as g_per_kwh,
        dsum(instrument_kwh) as instrument_kwh, dsum(supplier_kwh) as supplier_kwh, dsum(residual_kwh) as residual_kwh,
        dsum(uncovered_kwh) as uncovered_kwh,
        case when bool_and(status = 'available') then 'available' else 'not available' end as status,
        string_agg(reason, '; ' order by electricity_scope) as reason
    from int_market_factors
    group by month, zone
),

series as (
    select zone, strftime(hour_start, '%Y-%m') as month, count(*) as series_hours, max(n_files) as series_files
    from int_grid_hours
    group by all
)

select
    l.month, l.zone, z.grid_zone,
    l.facility_energy_kwh, l.facility_energy_kwh_low, l.facility_energy_kwh_high,
    l.co2e_kg, l.co2e_kg_low, l.co2e_kg_high,
    z.intensity_g_per_kwh as annual_g_per_kwh, z.intensity_id,
    l.co2e_hourly_kg, l.co2e_hourly_kg_low, l.co2e_hourly_kg_high,
    l.facility_energy_kwh_hourly,
    l.facility_energy_kwh_hourly / nullif(l.facility_energy_kwh, 0) as hourly_share,
    coalesce(h.hours_hourly, 0) as hours_hourly,
    coalesce(h.hours_annual, 0) as hours_annual,
    coalesce(s.series_hours, 0) as series_hours,
    m.co2e_market_kg, m.co2e_market_kg_low, m.co2e_market_kg_high, m.g_per_kwh as market_g_per_kwh,
    m.instrument_kwh, m.supplier_kwh, m.residual_kwh, m.uncovered_kwh,
    coalesce(m.status, 'not available') as market_status, m.reason as market_reason
from lines l
left join int_zone_factors z on z.zone = l.zone
left join hours h on h.month = l.month and h.zone = l.zone
left join series s on s.month = l.month and s.zone = l.zone
left join market m on m.month = l.month and m.zone = l.zone
