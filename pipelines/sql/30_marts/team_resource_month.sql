-- Grain: month x team x resource (resource_id null: charges tied to no resource, such as tax,
-- support and shared services). A statement's lines: what the team was charged for each resource
-- as allocated (allocation_lines), effective cost split by the part of the bill it comes from
-- (charge_part: direct use, idle GPU time, shared charges, credits), billed GPU-hours and, for
-- GPU instances, instance-hours (GPU-hours / GPUs per instance), with facility energy and CO2e.
with resources as (
    select month, resource_id, pick(instance_type) as instance_type,
        max(gpu_count) as gpu_count
    from int_charges_teams
    where resource_id is not null
    group by all
),

lines as (
    select month, team, resource_id, meter, charge_part(rule) as part, amount
    from allocation_lines
),

per_resource as (
    select month, team, resource_id,
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
    group by month, team, resource_id
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
    p.co2e_kg
from per_resource p
left join resources r on r.month = p.month and r.resource_id = p.resource_id
