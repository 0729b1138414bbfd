-- Grain: month x team x gpu_model x ownership. Billed GPU-hours as allocated to each team, by the
-- GPU model of the resource they were billed on (gpu_model null: a resource of unknown model) and
-- who owns it (int_resource_ownership: cloud, colocation, on-premises). The footprint audit
-- amortizes embodied carbon over these hours; the ownership decides its GHG scope (scope_month).
with models as (
    select month, resource_id, pick(gpu_model) as gpu_model
    from int_charges_teams
    where resource_id is not null
    group by all
)

select a.month, a.team, m.gpu_model, o.ownership, sum(a.amount)::double as gpu_hours
from allocation_lines a
left join models m on m.month = a.month and m.resource_id = a.resource_id
inner join int_resource_ownership o on o.month = a.month and coalesce(o.resource_id, '') = coalesce(a.resource_id, '')
where a.meter = 'gpu_hours'
group by a.month, a.team, m.gpu_model, o.ownership
having sum(a.amount) <> 0
