-- Grain: month x job x team x allocation line (currency, meter, rule, source group). A team's
-- allocated amounts (allocation_lines) shared out to its jobs by GPU-hours (int_job_claims):
--   on a billed resource, the team's amounts there (its own use, its idle share, unobserved
--   hours, energy) in proportion to the job's GPU-hours over the team's there
--   (int_job_alloc_basis; on_resource);
--   the team's other money (shared services, storage, credits, resources no job has hours on)
--   in proportion to the job's GPU-hours over all of the team's in the month. Money only: the
--   energy, CO2e and billed GPU-hours of a resource the job never ran on (an owned cluster's
--   capacity nobody held, another instance) are not the job's, and a training run's disclosed
--   energy must be what its own GPUs drew; they stay the team's, outside every job.
-- Ephemeral: inlined into the models that read it.
with job_hours as (
    select month, job_id, team, resource_id, dsum(gpu_hours) as h from int_job_claims group by all
),

shares as (
    -- on a resource: job / team hours there; pooled: job / team hours in the month
    select j.month, j.job_id, j.team, j.resource_id, j.h / b.basis_h as share
    from job_hours j join int_job_alloc_basis b on b.month = j.month and b.team = j.team and b.resource_id = j.resource_id
    union all
    select j.month, j.job_id, j.team, null, sum(j.h) / pick(t.total_h)
    from job_hours j
    join (select month, team, sum(basis_h) as total_h from int_job_alloc_basis group by all) t using (month, team)
    group by all
),

lines as (
    select l.*, l.resource_id is not null and b.basis_h is not null as on_resource
    from allocation_lines l
    left join int_job_alloc_basis b on b.month = l.month and b.team = l.team and b.resource_id = l.resource_id
    where l.month in (select month from job_hours)
)

select s.month, s.job_id, s.team, l.currency, l.meter, l.rule, l.source_group, l.on_resource,
    l.amount::double * s.share as amount
from shares s
join lines l on l.month = s.month and l.team = s.team
    and ((s.resource_id is not null and l.on_resource and l.resource_id = s.resource_id)
         or (s.resource_id is null and not l.on_resource and l.meter in ('billed_cost', 'effective_cost', 'list_cost')))
