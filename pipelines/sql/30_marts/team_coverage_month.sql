-- Grain: month x team. How much of what a team is charged for telemetry describes: its billed
-- GPU-hours and GPU cost as allocated (allocation_lines), and the part of them telemetry saw (each
-- line weighted by its resource's observed share of its billed GPU-hours, int_resource_coverage),
-- plus the GPU-hours telemetry observed for it. has_telemetry is false for a team none of whose
-- GPU time telemetry saw: its utilization and idle time are unknown, never zero. telemetry_month
-- holds the fleet's totals of the same shares.
with lines as (
    select l.month, l.team, l.meter, l.amount,
        c.resource_id is not null as on_gpu_resource,
        coalesce(c.telemetry_share, 0) as telemetry_share
    from allocation_lines l
    left join int_resource_coverage c on c.month = l.month and c.resource_id = l.resource_id
    where l.currency is not null or l.meter = 'gpu_hours_observed'
),

totals as (
    select
        month,
        team,
        coalesce(sum(amount) filter (where meter = 'gpu_hours'), 0)::double as gpu_hours,
        coalesce(sum(amount * telemetry_share) filter (where meter = 'gpu_hours'), 0)::double as gpu_hours_with_telemetry,
        coalesce(sum(amount) filter (where meter = 'effective_cost' and on_gpu_resource), 0)::double as gpu_cost,
        coalesce(sum(amount * telemetry_share) filter (where meter = 'effective_cost'), 0)::double as gpu_cost_with_telemetry,
        coalesce(sum(amount) filter (where meter = 'gpu_hours_observed'), 0)::double as gpu_hours_observed,
        coalesce(sum(amount) filter (where meter = 'gpu_hours_observed'), 0) > 0 as has_telemetry
    from lines
    group by month, team
)

select *,
    gpu_hours_with_telemetry / nullif(gpu_hours, 0) as gpu_hours_telemetry_share,
    gpu_cost_with_telemetry / nullif(gpu_cost, 0) as gpu_cost_telemetry_share
from totals
