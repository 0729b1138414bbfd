-- Grain: month x zone x electricity_scope. The market-based factor of a zone's facility energy in a
-- month, apart for Scope 2 (owned, colocation) and cloud energy, which instruments do not cover
-- (int_market_claims): the CO2e
-- of its claims (int_market_claims) over the energy they cover, at the central, low and high
-- energy. What covers the energy: certificates and contracts (instrument_kwh), supplier factors
-- (supplier_kwh), the residual mix (residual_kwh). Where some energy has none of these and the
-- zone no residual mix, the zone's market-based figure is not available (a partial sum would
-- understate it): factors null, and reason says why.
with by_variant as (
    select month, zone, electricity_scope, variant, pick(consumption_kwh) as consumption_kwh,
        case when bool_or(claim_kind = 'not_available') then null else dsum(co2e_kg) end as co2e_kg,
        coalesce(sum(applied_kwh::decimal(38, 12)) filter (where claim_kind = 'instrument'), 0)::double as instrument_kwh,
        coalesce(sum(applied_kwh::decimal(38, 12)) filter (where claim_kind = 'supplier'), 0)::double as supplier_kwh,
        coalesce(sum(applied_kwh::decimal(38, 12)) filter (where claim_kind = 'residual_mix'), 0)::double as residual_kwh,
        coalesce(sum(applied_kwh::decimal(38, 12)) filter (where claim_kind = 'not_available'), 0)::double as uncovered_kwh
    from int_market_claims
    where zone is not null
    group by month, zone, electricity_scope, variant
),

pivoted as (
    select c.month, c.zone, c.electricity_scope, c.consumption_kwh as facility_energy_kwh, c.co2e_kg as co2e_market_kg,
        lo.co2e_kg as co2e_market_kg_low, hi.co2e_kg as co2e_market_kg_high,
        c.instrument_kwh, c.supplier_kwh, c.residual_kwh, c.uncovered_kwh,
        c.co2e_kg * getvariable('g_per_kg') / nullif(c.consumption_kwh, 0) as g_per_kwh,
        lo.co2e_kg * getvariable('g_per_kg') / nullif(lo.consumption_kwh, 0) as g_per_kwh_low,
        hi.co2e_kg * getvariable('g_per_kg') / nullif(hi.consumption_kwh, 0) as g_per_kwh_high
    from by_variant c
    join by_variant lo on lo.month = c.month and lo.zone = c.zone and lo.electricity_scope = c.electricity_scope
        and lo.variant = 'low'
    join by_variant hi on hi.month = c.month and hi.zone = c.zone and hi.electricity_scope = c.electricity_scope
        and hi.variant = 'high'
    where c.variant = 'central'
)

select
    p.*,
    case when p.co2e_market_kg is null then 'not available' else 'available' end as status,
    case when p.co2e_market_kg is null and p.electricity_scope = 'Scope 2' then
        printf('%.1f kWh in %s have no contractual instrument or supplier factor, and sources/reference has no residual mix for %s%s: declare an instrument or [[carbon.supplier_factors]] for it',
               p.uncovered_kwh, p.zone, p.zone, coalesce(' (country ' || z.country || ')', ' (its country is not known: map it in [carbon.grid_zones] to an Electricity Maps zone, whose id starts with the country code)'))
         -- the organisation's instruments cannot cover a provider's electricity: only a residual mix can
         when p.co2e_market_kg is null then
        printf('%.1f kWh of cloud energy in %s (the provider''s electricity, which the organisation''s instruments and supplier factors do not cover), and sources/reference has no residual mix for %s%s',
               p.uncovered_kwh, p.zone, p.zone, coalesce(' (country ' || z.country || ')', ' (its country is not known: map it in [carbon.grid_zones] to an Electricity Maps zone, whose id starts with the country code)'))
    end as reason
from pivoted p
left join int_zone_factors z on z.zone = p.zone
