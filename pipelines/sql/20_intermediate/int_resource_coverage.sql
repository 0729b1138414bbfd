-- Grain: month x billed GPU resource. How much of a resource's billed GPU-hours telemetry saw:
-- its observed GPU-hours (int_gpu_workloads) over its billed ones, at most the whole. A host
-- scraped for one hour of a month covers that hour, not the month: team_coverage_month and
-- telemetry_month weight each billed GPU-hour and GPU dollar of the resource by this share.
with billed as (
    select month, resource_id, dsum(gpu_hours) as gpu_hours_billed
    from int_charges_teams
    where gpu_hours > 0
    group by all
),

observed as (
    select strftime(hour_start, '%Y-%m') as month, resource_id, dsum(gpu_hours_observed) as gpu_hours_observed
    from int_gpu_workloads
    where resource_id is not null
    group by all
)

select b.month, b.resource_id, b.gpu_hours_billed, coalesce(o.gpu_hours_observed, 0) as gpu_hours_observed,
    least(coalesce(o.gpu_hours_observed, 0) / b.gpu_hours_billed, 1) as telemetry_share
from billed b
left join observed o using (month, resource_id)
