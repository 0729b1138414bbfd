-- Energy and CO2e per month, team, billed resource and source (grain: month x team x resource
-- x zone x basis x idle): int_energy_base's lines with their market-based CO2e. allocation_lines
-- distributes them (chargeback), the FOCUS export rolls them up by resource.
-- co2e_market_kg: facility energy x the zone's market-based factor for the month (int_market_factors:
-- instruments, then supplier factors, then the residual mix); null where the zone's is not
-- available. Its range takes each end's own factor (the matching redone at low and high energy).
select
    b.*,
    b.facility_energy_kwh * m.g_per_kwh / getvariable('g_per_kg') as co2e_market_kg,
    b.facility_energy_kwh_low * m.g_per_kwh_low / getvariable('g_per_kg') as co2e_market_kg_low,
    b.facility_energy_kwh_high * m.g_per_kwh_high / getvariable('g_per_kg') as co2e_market_kg_high
from int_energy_base b
left join int_market_factors m on m.month = b.month and m.zone = b.zone
