-- Energy and CO2e per month, team, billed resource and source (grain: month x team x resource
-- x zone x basis x idle): int_energy_base's lines with their market-based CO2e. allocation_lines
-- distributes them (chargeback), the FOCUS export rolls them up by resource.
-- co2e_market_kg: facility energy x the zone's market-based factor for the month and the line's
-- electricity scope (int_market_factors: instruments, then supplier factors, then the residual mix
-- for Scope 2 energy; the residual mix for cloud energy, which instruments do not cover); null
-- where it is not available. Its range takes each end's own factor (the matching redone at low
-- and high energy).
select
    b.*,
    b.facility_energy_kwh * m.g_per_kwh / getvariable('g_per_kg') as co2e_market_kg,
    b.facility_energy_kwh_low * m.g_per_kwh_low / getvariable('g_per_kg') as co2e_market_kg_low,
    b.facility_energy_kwh_high * m.g_per_kwh_high / getvariable('g_per_kg') as co2e_market_kg_high
from int_energy_base b
inner join int_resource_ownership o on o.month = b.month and coalesce(o.resource_id, '') = coalesce(b.resource_id, '')
left join int_market_factors m on m.month = b.month and m.zone = b.zone and m.electricity_scope = o.electricity_scope
