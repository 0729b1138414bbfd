-- Grain: provider x month x account x service x region. What the cloud reports for a line of
-- its carbon export (provider_carbon: AWS CARBON_EMISSIONS, Google Carbon Footprint) beside
-- meterbook's bottom-up figure for the same account, region and month, on the same basis:
-- location-based (AWS total_lbm, Google total location_based) against co2e_kg with its range,
-- market-based against co2e_market_kg. meterbook meters GPU energy on compute services only
-- (metered_services below), so its figure for any other service is zero by its boundary.
-- gap_class says why the two differ:
--   within range                  the provider's figure lies inside meterbook's [low, high];
--   boundary: non-GPU service     storage, network, support...: outside meterbook's boundary;
--   boundary: shared infrastructure  above the range on compute: the provider counts CPU hosts,
--                                 memory, networking, its own overhead and (Google) Scope 1 and 3;
--   provider PUE and market instruments  below the range: the provider's own PUE, allocation and
--                                 contractual instruments lower its figure;
--   boundary: no meterbook data   a compute line of an account, region or month meterbook was given
--                                 no billing or telemetry for;
--   not in the provider export    meterbook has CO2e where the export has no line.
-- finding: a sentence where a compute line lies outside the range (null otherwise).
with latest as (
    -- an export restated for a month (a later file for the same payer and month) replaces the earlier one
    select c.*
    from provider_carbon c
    join source_files f using (file_id)
    where f.status = 'loaded'
    qualify dense_rank() over (partition by c.provider, c.usage_month, c.payer_account_id order by c.file_id desc) = 1
),

provider as (
    select provider, usage_month as month, account_id, service, region, pick(payer_account_id) as payer_account_id,
        string_agg(distinct model_version, ', ' order by model_version) as model_version,
        dsum(co2e_location_kg) as provider_co2e_location_kg,
        dsum(co2e_market_kg) as provider_co2e_market_kg
    from latest
    group by all
),

metered_services as (
    -- the provider's service names for the compute its GPU instances bill under
    select s.provider, s.service from (values ('aws', 'AmazonEC2'), ('gcp', 'Compute Engine')) s (provider, service)
),

resources as (
    select distinct month, resource_id, lower(provider) as provider, account, region
    from int_charges_teams
    where resource_id is not null and lower(provider) in ('aws', 'gcp')
),

metered as (
    select r.provider, a.month, r.account as account_id, s.service, r.region,
        sum((a.amount)::decimal(38, 12)) filter (where a.meter = 'co2e_kg')::double as co2e_kg,
        sum((a.amount)::decimal(38, 12)) filter (where a.meter = 'co2e_kg_low')::double as co2e_kg_low,
        sum((a.amount)::decimal(38, 12)) filter (where a.meter = 'co2e_kg_high')::double as co2e_kg_high,
        sum((a.amount)::decimal(38, 12)) filter (where a.meter = 'co2e_market_kg')::double as co2e_market_kg,
        sum((a.amount)::decimal(38, 12)) filter (where a.meter = 'co2e_market_kg_low')::double as co2e_market_kg_low,
        sum((a.amount)::decimal(38, 12)) filter (where a.meter = 'co2e_market_kg_high')::double as co2e_market_kg_high
    from allocation_lines a
    join resources r on r.month = a.month and r.resource_id = a.resource_id
    join metered_services s on s.provider = r.provider
    where a.meter like 'co2e%' and a.month in (select month from provider)
    group by all
),

joined as (
    select
        coalesce(p.provider, m.provider) as provider,
        coalesce(p.month, m.month) as month,
        coalesce(p.account_id, m.account_id) as account_id,
        coalesce(p.service, m.service) as service,
        coalesce(p.region, m.region) as region,
        p.payer_account_id, p.model_version,
        p.provider_co2e_location_kg, p.provider_co2e_market_kg,
        coalesce(m.co2e_kg, 0) as co2e_kg,
        coalesce(m.co2e_kg_low, 0) as co2e_kg_low,
        coalesce(m.co2e_kg_high, 0) as co2e_kg_high,
        coalesce(m.co2e_market_kg, 0) as co2e_market_kg,
        coalesce(m.co2e_market_kg_low, 0) as co2e_market_kg_low,
        coalesce(m.co2e_market_kg_high, 0) as co2e_market_kg_high,
        s.service is not null as metered,
        m.account_id is not null as seen
    from provider p
    full join metered m
        on m.provider = p.provider and m.month = p.month and m.account_id = p.account_id
        and m.service = p.service and m.region is not distinct from p.region
    left join metered_services s on s.provider = coalesce(p.provider, m.provider) and s.service = coalesce(p.service, m.service)
),

classed as (
    select *,
        provider_co2e_location_kg - co2e_kg as difference_location_kg,
        provider_co2e_market_kg - co2e_market_kg as difference_market_kg,
        provider_co2e_location_kg between co2e_kg_low and co2e_kg_high as location_in_range,
        provider_co2e_market_kg between co2e_market_kg_low and co2e_market_kg_high as market_in_range,
        case when provider_co2e_location_kg is null then 'not in the provider export'
             when not metered then 'boundary: non-GPU service'
             when not seen then 'boundary: no meterbook data'
             when provider_co2e_location_kg between co2e_kg_low and co2e_kg_high then 'within range'
             when provider_co2e_location_kg > co2e_kg_high then 'boundary: shared infrastructure'
             else 'provider PUE and market instruments' end as gap_class
    from joined
)

select *,
    case when metered and seen and provider_co2e_location_kg is not null and not location_in_range then
        upper(provider) || ' reports ' || round(provider_co2e_location_kg, 1) || ' kg CO2e (location-based) for ' || service
        || ' in account ' || account_id || ', ' || coalesce(region, 'global') || ', ' || month || '; meterbook '
        || round(co2e_kg, 1) || ' kg (' || round(co2e_kg_low, 1) || ' to ' || round(co2e_kg_high, 1) || '): ' || gap_class
    end as finding
from classed
