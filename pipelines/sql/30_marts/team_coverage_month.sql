-- Grain: month x team. How much of what a team is charged for telemetry describes: its billed
-- GPU-hours and GPU cost as allocated (allocation_lines), and the part of them on resources that
-- telemetry maps to (int_gpu_workloads.resource_id), plus the GPU-hours telemetry observed for it.
-- has_telemetry is false for a team none of whose GPU time telemetry saw: its utilization and idle
-- time are unknown, never zero. telemetry_month holds the fleet's totals of the same shares.
with observed_resources as (
    select distinct strftime(hour_start, '%Y-%m') as month, resource_id
    from int_gpu_workloads
    where resource_id is not null
),

gpu_resources as (
    select distinct month, resource_id
    from int_charges_teams
    where gpu_hours > 0
),

lines as (
    select l.month, l.team, l.meter, l.amount,
        g.resource_id is not null as on_gpu_resource,
        o.resource_id is not null as on_observed_resource
    from allocation_lines l
    left join gpu_resources g on g.month = l.month and g.resource_id = l.resource_id
    left join observed_resources o on o.month = l.month and o.resource_id = l.resource_id
    where l.currency is not null or l.meter = 'gpu_hours_observed'
),

totals as (
    select
        month,
        team,
        coalesce(sum(amount) filter (where meter = 'gpu_hours'), 0)::double as gpu_hours,
        coalesce(sum(amount) filter (where meter = 'gpu_hours' and on_observed_resource), 0)::double as gpu_hours_with_telemetry,
        coalesce(sum(amount) filter (where meter = 'effective_cost' and on_gpu_resource), 0)::double as gpu_cost,
        coalesce(sum(amount) filter (where meter = 'effective_cost' and on_observed_resource), 0)::double as gpu_cost_with_telemetry,
        coalesce(sum(amount) filter (where meter = 'gpu_hours_observed'), 0)::double as gpu_hours_observed,
        coalesce(sum(amount) filter (where meter = 'gpu_hours_observed'), 0) > 0 as has_telemetry
    from lines
    group by month, team
)

select *,
    gpu_hours_with_telemetry / nullif(gpu_hours, 0) as gpu_hours_telemetry_share,
    gpu_cost_with_telemetry / nullif(gpu_cost, 0) as gpu_cost_telemetry_share
from totals
