-- What there is to allocate: one row per month x source group x meter, amount in DECIMAL(38, 12).
-- Charges: grouped by category, currency, account, resource (else service) and resolved team
-- (int_charges_teams.source_group), meters billed/effective/list cost and billed GPU-hours.
-- Energy: one group per month x basis x resource x team piece (idle its own piece), meters
-- observed and effective GPU-hours, IT/facility energy, CO2e (location: annual and hourly-matched,
-- with ranges; market-based with its range) and the facility energy with an hourly factor and
-- without a market-based one (market_na: its zone's is not available). Doubles
-- become decimals here, each before it is summed (an order-free sum), so the allocation below
-- is exact against these totals and the same whatever else the warehouse holds.
with charge_groups as (
    select month, source_group, alloc_category as category, billing_currency as currency, resource_id,
        pick(service_name) as service_name, pick(account) as account,
        pick(resolved_team) as team,
        sum(billed_cost) as billed_cost, sum(effective_cost) as effective_cost, sum(list_cost) as list_cost,
        sum(gpu_hours::decimal(38, 12)) as gpu_hours,
        count(*) as charge_rows
    from int_charges_teams
    group by month, source_group, alloc_category, billing_currency, resource_id
),

energy_groups as (
    select month, source_group,
        -- an owned cluster's GPUs no job held are its unallocated capacity (its cost pool's
        -- IdleCapacity line), not idle GPU time
        case when is_idle and resource_id in (select resource_id from int_cost_pool_lines where line_item_type = 'IdleCapacity')
             then 'unallocated_capacity'
             when is_idle then 'idle' when team is null then 'untagged' else 'direct' end as category,
        null::varchar as currency, resource_id, null::varchar as service_name, null::varchar as account,
        pick(team) as team,
        sum(gpu_hours::decimal(38, 12)) filter (where basis = 'measured') as gpu_hours_observed,
        sum(util_weighted::decimal(38, 12)) as effective_gpu_hours,
        sum(it_energy_kwh::decimal(38, 12)) as it_energy_kwh,
        sum(it_energy_kwh::decimal(38, 12)) filter (where basis = 'measured') as it_energy_kwh_measured,
        sum(facility_energy_kwh::decimal(38, 12)) as facility_energy_kwh,
        sum(facility_energy_kwh_low::decimal(38, 12)) as facility_energy_kwh_low,
        sum(facility_energy_kwh_high::decimal(38, 12)) as facility_energy_kwh_high,
        sum(co2e_kg::decimal(38, 12)) as co2e_kg,
        sum(co2e_kg_low::decimal(38, 12)) as co2e_kg_low,
        sum(co2e_kg_high::decimal(38, 12)) as co2e_kg_high,
        sum(co2e_market_kg::decimal(38, 12)) as co2e_market_kg,
        sum(co2e_market_kg_low::decimal(38, 12)) as co2e_market_kg_low,
        sum(co2e_market_kg_high::decimal(38, 12)) as co2e_market_kg_high,
        sum(co2e_hourly_kg::decimal(38, 12)) as co2e_hourly_kg,
        sum(co2e_hourly_kg_low::decimal(38, 12)) as co2e_hourly_kg_low,
        sum(co2e_hourly_kg_high::decimal(38, 12)) as co2e_hourly_kg_high,
        sum(facility_energy_kwh_hourly::decimal(38, 12)) as facility_energy_kwh_hourly,
        coalesce(sum(facility_energy_kwh::decimal(38, 12)) filter (where co2e_market_kg is null), 0) as facility_energy_kwh_market_na
    from int_energy_lines
    group by all
),

charge_meters as (
    unpivot charge_groups
    on billed_cost, effective_cost, list_cost, gpu_hours
    into name meter value amount
),

energy_meters as (
    unpivot energy_groups
    on gpu_hours_observed, effective_gpu_hours, it_energy_kwh, it_energy_kwh_measured, facility_energy_kwh,
       facility_energy_kwh_low, facility_energy_kwh_high, co2e_kg, co2e_kg_low, co2e_kg_high, co2e_market_kg,
       co2e_market_kg_low, co2e_market_kg_high, co2e_hourly_kg, co2e_hourly_kg_low, co2e_hourly_kg_high,
       facility_energy_kwh_hourly, facility_energy_kwh_market_na
    into name meter value amount
)

select month, source_group, category, currency, resource_id, service_name, account, team, meter,
    amount::decimal(38, 12) as amount
from charge_meters
union all by name
select month, source_group, category, currency, resource_id, service_name, account, team, meter,
    amount::decimal(38, 12) as amount
from energy_meters
