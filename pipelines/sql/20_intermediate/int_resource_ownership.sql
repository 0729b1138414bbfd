-- Grain: month x resource id the month's energy lines or bill name, and per month one row with a
-- null resource id (GPUs no bill covers). By month, so another month's bill never moves a
-- month's scopes. Who owns the hardware, which decides the GHG scopes of its
-- electricity and embodied emissions (scope_month). Default by billing source: a resource a cloud
-- provider bills is a rented "cloud" instance; GPUs no cloud bill covers are the organisation's
-- own ("on-premises"). [scopes] overrides it, narrowest first: resource, then account, then
-- provider (cfg_ownership). ownership_source says which decided.
-- The scopes (GHG Protocol Scope 2 Guidance, 2015, ch. 5; Corporate Value Chain (Scope 3)
-- Standard, 2011, ch. 5): a rented cloud instance is a purchased service, so its electricity and
-- its embodied emissions are the customer's Scope 3, category 1 (purchased goods and services);
-- owned or controlled equipment (on-premises, colocation) draws electricity the organisation buys:
-- Scope 2. Its embodied emissions as meterbook figures them (amortised by GPU-hour over the
-- hardware life) are in no scope: Scope 3, category 2 (capital goods) counts the whole
-- cradle-to-gate emissions of what was acquired, in the year of acquisition, never depreciated or
-- amortised (Scope 3 Standard, ch. 5, category 2, p. 39). The amortised share is an allocation to use (SCI's M),
-- reported beside the inventory; category 2 needs acquisitions, which no input holds.
with billed as (
    select month, resource_id, pick(provider) as provider, pick(account) as account
    from int_charges_teams
    where resource_id is not null
    group by month, resource_id
),

resources as (
    -- int_energy_base, not int_energy_lines: the market-based claims (int_market_claims, which
    -- int_energy_lines reads) need the ownership to know which energy instruments may cover
    select distinct l.month, l.resource_id, b.provider, b.account
    from int_energy_base l
    left join billed b on b.month = l.month and b.resource_id = l.resource_id
    union
    select month, resource_id, provider, account from billed
    union
    -- always present: lines and GPU-hours of no resource meet it, so joins on ownership drop nothing
    select month, null, null, null from int_energy_base
    union
    select month, null, null, null from int_charges_teams
),

configured as (
    select
        r.*,
        cr.ownership as by_resource,
        ca.ownership as by_account,
        cp.ownership as by_provider
    from resources r
    left join cfg_ownership cr on cr.level = 'resources' and cr.name = r.resource_id
    left join cfg_ownership ca on ca.level = 'accounts' and ca.name = r.account
    left join cfg_ownership cp on cp.level = 'providers' and lower(cp.name) = lower(r.provider)
),

resolved as (
    select
        month,
        resource_id,
        provider,
        account,
        coalesce(by_resource, by_account, by_provider,
                 case when provider = 'owned' then 'on-premises' when provider is not null then 'cloud' else 'on-premises' end)
            as ownership,
        case when by_resource is not null then 'meterbook.toml [scopes] resources'
             when by_account is not null then 'meterbook.toml [scopes] accounts'
             when by_provider is not null then 'meterbook.toml [scopes] providers'
             -- an owned cluster's cost pool (int_cost_pool_lines) is no provider's bill
             when provider = 'owned' then 'an owned cluster, charged back from its cost pool'
             when provider is not null then 'billed by the cloud provider ' || provider
             else 'no cloud bill covers these GPUs' end as ownership_source
    from configured
)

select
    *,
    case when ownership = 'cloud' then 'Scope 3, category 1' else 'Scope 2' end as electricity_scope,
    case when ownership = 'cloud' then 'Scope 3, category 1'
         else 'not in a scope (an amortised share, reported beside the inventory)' end as embodied_scope
from resolved
