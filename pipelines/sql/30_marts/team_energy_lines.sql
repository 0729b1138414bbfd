-- Grain: one row per month, team and energy line of int_energy_lines (zone x basis x resource x
-- idle) the team received a share of. Each meter is the team's share of the line, as the
-- allocation gave it (allocation_lines.share is per source group and team, the same for every
-- meter of the group). For the footprint audit: a team's IT-energy range, the zones its energy
-- sits in (market-based factors are configured per zone; null co2e_market_kg = none for the
-- zone), and which coefficients each meter rests on, for the tornado: IT energy on
-- energy_assumption_ids (none when measured), facility energy also on pue_id, CO2e also on
-- intensity_id. Lines meet their group by int_energy_lines.source_group. ownership: who owns the
-- line's hardware (int_resource_ownership), which decides its GHG scope (scope_month).
with lines as (
    select * from int_energy_lines
),

shares as (
    select month, source_group, team, pick(share) as share
    from allocation_lines
    where currency is null
    group by all
)

select
    s.month,
    s.team,
    l.zone,
    l.basis,
    l.resource_id,
    l.is_idle,
    o.ownership,
    s.share,
    s.share * l.it_energy_kwh as it_energy_kwh,
    s.share * l.it_energy_kwh_low as it_energy_kwh_low,
    s.share * l.it_energy_kwh_high as it_energy_kwh_high,
    s.share * l.facility_energy_kwh as facility_energy_kwh,
    s.share * l.facility_energy_kwh_low as facility_energy_kwh_low,
    s.share * l.facility_energy_kwh_high as facility_energy_kwh_high,
    s.share * l.co2e_kg as co2e_kg,
    s.share * l.co2e_kg_low as co2e_kg_low,
    s.share * l.co2e_kg_high as co2e_kg_high,
    s.share * l.co2e_market_kg as co2e_market_kg,
    s.share * l.co2e_market_kg_low as co2e_market_kg_low,
    s.share * l.co2e_market_kg_high as co2e_market_kg_high,
    l.assumption_ids as energy_assumption_ids,
    z.pue_id,
    z.intensity_id
from shares s
join lines l on l.month = s.month and l.source_group = s.source_group
left join int_zone_factors z on z.zone = l.zone
inner join int_resource_ownership o on o.month = l.month and coalesce(o.resource_id, '') = coalesce(l.resource_id, '')
