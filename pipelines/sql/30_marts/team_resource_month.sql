-- Grain: month x team x resource (resource_id null: charges tied to no resource, such as tax,
-- support and shared services). A statement's lines: what the team was charged for each resource
-- as allocated (allocation_lines), effective cost split by the part of the bill it comes from
-- (charge_part: direct use, idle GPU time, shared charges, credits), billed GPU-hours and, for
-- GPU instances, instance-hours (GPU-hours / GPUs per instance), with facility energy and CO2e.
-- One row per billing currency the resource was charged in (currency; a resource's energy and
-- hours go with its money): the money as billed and, beside it, in the month's reporting currency
-- (*_reporting: int_fx_lines, the team's converted bill split over its lines, so a team's
-- resources add up to team_currency_month and team_month_reporting exactly).
with resources as (
    select month, resource_id, pick(instance_type) as instance_type,
        max(gpu_count) as gpu_count
    from int_charges_teams
    where resource_id is not null
    group by all
),

lines as (
    select a.month, a.team, a.resource_id, coalesce(b.currency, a.currency) as currency, a.meter, charge_part(a.rule) as part, a.amount
    from allocation_lines a
    left join int_fx_owners b on b.month = a.month and b.owner_kind = 'resource' and b.owner = a.resource_id
),

converted as (
    select month, team, resource_id, currency, pick(reporting_currency) as reporting_currency,
        sum(amount_reporting) filter (where meter = 'billed_cost') as billed_cost_reporting,
        sum(amount_reporting) filter (where meter = 'effective_cost') as effective_cost_reporting,
        sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'direct') as effective_cost_direct_reporting,
        sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'idle') as effective_cost_idle_reporting,
        sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'shared') as effective_cost_shared_reporting,
        sum(amount_reporting) filter (where meter = 'effective_cost' and part = 'credits') as effective_cost_credits_reporting,
        bool_and(amount_reporting is not null) as rated
    from int_fx_lines
    group by month, team, resource_id, currency
),

per_resource as (
    select month, team, resource_id, currency,
        sum(amount) filter (where meter = 'billed_cost') as billed_cost,
        sum(amount) filter (where meter = 'effective_cost') as effective_cost,
        sum(amount) filter (where meter = 'effective_cost' and part = 'direct') as effective_cost_direct,
        sum(amount) filter (where meter = 'effective_cost' and part = 'idle') as effective_cost_idle,
        sum(amount) filter (where meter = 'effective_cost' and part = 'shared') as effective_cost_shared,
        sum(amount) filter (where meter = 'effective_cost' and part = 'credits') as effective_cost_credits,
        sum(amount) filter (where meter = 'gpu_hours')::double as gpu_hours,
        sum(amount) filter (where meter = 'gpu_hours_observed')::double as gpu_hours_observed,
        sum(amount) filter (where meter = 'facility_energy_kwh')::double as facility_energy_kwh,
        sum(amount) filter (where meter = 'co2e_kg')::double as co2e_kg
    from lines
    group by month, team, resource_id, currency
)

select
    p.month,
    p.team,
    p.resource_id,
    r.instance_type,
    p.gpu_hours / nullif(r.gpu_count, 0) as instance_hours,
    p.gpu_hours,
    p.gpu_hours_observed,
    coalesce(p.billed_cost, 0) as billed_cost,
    coalesce(p.effective_cost, 0) as effective_cost,
    coalesce(p.effective_cost_direct, 0) as effective_cost_direct,
    coalesce(p.effective_cost_idle, 0) as effective_cost_idle,
    coalesce(p.effective_cost_shared, 0) as effective_cost_shared,
    coalesce(p.effective_cost_credits, 0) as effective_cost_credits,
    p.facility_energy_kwh,
    p.co2e_kg,
    p.currency,
    c.reporting_currency,
    case when c.rated is not false then coalesce(c.billed_cost_reporting, 0) end as billed_cost_reporting,
    case when c.rated is not false then coalesce(c.effective_cost_reporting, 0) end as effective_cost_reporting,
    case when c.rated is not false then coalesce(c.effective_cost_direct_reporting, 0) end as effective_cost_direct_reporting,
    case when c.rated is not false then coalesce(c.effective_cost_idle_reporting, 0) end as effective_cost_idle_reporting,
    case when c.rated is not false then coalesce(c.effective_cost_shared_reporting, 0) end as effective_cost_shared_reporting,
    case when c.rated is not false then coalesce(c.effective_cost_credits_reporting, 0) end as effective_cost_credits_reporting
from per_resource p
left join resources r on r.month = p.month and r.resource_id = p.resource_id
left join converted c on c.month = p.month and c.team = p.team and c.resource_id is not distinct from p.resource_id
    and c.currency is not distinct from p.currency
