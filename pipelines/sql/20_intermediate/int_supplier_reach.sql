-- Grain: month x supplier factor of meterbook.toml (cfg_supplier_factors, by its zone). The energy
-- in the zones a factor names (names_zone, as int_market_claims matches it), split into Scope 2
-- (owned, colocation: the electricity the organisation buys, which the factor may cover) and
-- cloud (the provider's electricity, which it may not; Scope 2 Guidance, ch. 7), from the
-- consumption the market-based matching worked on (market_basis_month). A factor with no Scope 2
-- energy applies to nothing that month, so the market-based figure of any cloud energy it names
-- is the residual mix: a finding (supplier_factor_unmatched) and a line of `meterbook config
-- check` say which factor and why.
with consumption as (
    select month, zone, electricity_scope, pick(consumption_kwh) as consumption_kwh
    from market_basis_month
    where zone is not null
    group by month, zone, electricity_scope
),

months as (
    select distinct month from consumption
),

named as (
    select m.month, f.zone as declared_zone, f.g_per_kwh, f.source, c.zone, c.electricity_scope, c.consumption_kwh
    from cfg_supplier_factors f
    cross join months m
    left join int_zone_factors z on names_zone(f.zone, z.zone, z.grid_zone, z.operator_code, z.country)
    left join consumption c on c.month = m.month and c.zone = z.zone
)

select
    month,
    'config:' || declared_zone as claim,
    declared_zone,
    pick(g_per_kwh) as g_per_kwh,
    pick(source) as source,
    coalesce(dsum(case when electricity_scope = 'Scope 2' then consumption_kwh end), 0) as scope2_kwh,
    coalesce(dsum(case when electricity_scope <> 'Scope 2' then consumption_kwh end), 0) as cloud_kwh,
    string_agg(distinct case when electricity_scope <> 'Scope 2' then zone end, ', '
               order by case when electricity_scope <> 'Scope 2' then zone end) as cloud_zones
from named
group by month, declared_zone
