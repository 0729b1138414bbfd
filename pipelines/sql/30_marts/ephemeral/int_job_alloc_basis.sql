-- Grain: month x team x resource. The GPU-hours a team's amounts on a resource are shared by
-- among its jobs (job_month): its busy telemetry hours there (int_gpu_workloads), plus the idle
-- hours its jobs claimed (int_job_claims); on a resource with no telemetry in the month, its
-- billed GPU-hours (allocation_lines). Ephemeral: inlined into the models that read it.
with observed_resources as (
    select distinct strftime(hour_start, '%Y-%m') as month, resource_id from int_gpu_workloads
)

select month, team, resource_id, dsum(h) as basis_h
from (
    select strftime(hour_start, '%Y-%m') as month, coalesce(team, getvariable('unallocated')) as team, resource_id,
        gpu_hours_observed as h
    from int_gpu_workloads where not is_idle
    union all
    select month, team, resource_id, gpu_hours from int_job_claims where basis = 'telemetry' and is_idle
    union all
    select l.month, l.team, l.resource_id, l.amount::double
    from allocation_lines l anti join observed_resources r on r.month = l.month and r.resource_id = l.resource_id
    where l.meter = 'gpu_hours' and l.resource_id is not null
)
group by all
having dsum(h) > 0
