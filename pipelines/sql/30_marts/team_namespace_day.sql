-- Grain: month x day x team x namespace (UTC day). The drill-down under a team's total where
-- telemetry exists: observed GPU-hours, the GPU boards' energy and utilization per namespace and
-- day, under the team int_gpu_workloads resolved for the namespace (the unallocated name where
-- nothing maps). Idle GPU time is not a workload (allocation_lines shares it).
with workloads as (
    select
        strftime(hour_start, '%Y-%m') as month,
        hour_start::date as day,
        coalesce(team, getvariable('unallocated')) as team,
        namespace,
        gpu_hours_observed,
        energy_kwh,
        util_mean
    from int_gpu_workloads
    where not is_idle
)

select
    month,
    day,
    team,
    namespace,
    dsum(gpu_hours_observed) as gpu_hours,
    dsum(energy_kwh) as it_energy_kwh,
    (sum((gpu_hours_observed * util_mean)::decimal(38, 12)) filter (where util_mean is not null)
        / nullif(sum(gpu_hours_observed::decimal(38, 12)) filter (where util_mean is not null), 0))::double as util_mean
from workloads
group by month, day, team, namespace
