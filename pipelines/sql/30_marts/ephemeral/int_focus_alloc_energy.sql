-- Grain: charge source group x team x rule with energy on the group's resource. The team's
-- facility energy and location-based CO2e (with ranges) under that rule on that resource: the
-- allocation engine's energy lines (allocation_lines, the chargeback's figures: measured pod
-- energy, MIG activity, idle time by the idle rule), which int_alloc_first_stage gives the rules
-- the resource's charges took. focus_allocated splits a line's energy over its rows by these, so
-- the rows summed per team give team_month's energy, where a list-cost ratio would give the
-- team's share of the price instead. Ephemeral: inlined into its readers.
with groups as (
    select distinct month, source_group, resource_id
    from allocation_lines
    where currency is not null and resource_id is not null
),

energy as (
    -- exact decimals (allocation_lines), so the parts below sum in any order to the same
    select month, resource_id, team, rule,
        sum(amount) filter (where meter = 'facility_energy_kwh') as kwh,
        sum(amount) filter (where meter = 'facility_energy_kwh_low') as kwh_low,
        sum(amount) filter (where meter = 'facility_energy_kwh_high') as kwh_high,
        sum(amount) filter (where meter = 'co2e_kg') as co2e,
        sum(amount) filter (where meter = 'co2e_kg_low') as co2e_low,
        sum(amount) filter (where meter = 'co2e_kg_high') as co2e_high
    from allocation_lines
    where currency is null and resource_id is not null
        and meter in ('facility_energy_kwh', 'facility_energy_kwh_low', 'facility_energy_kwh_high', 'co2e_kg',
                      'co2e_kg_low', 'co2e_kg_high')
    group by all
)

select g.source_group, e.team, e.rule, e.kwh, e.kwh_low, e.kwh_high, e.co2e, e.co2e_low, e.co2e_high
from groups g
join energy e on e.month = g.month and e.resource_id = g.resource_id
