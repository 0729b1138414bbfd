-- Grain: month x team x namespace x pod. The workloads telemetry saw on the GPUs, under the team
-- int_gpu_workloads resolved for their namespace ([teams.namespaces], then [[teams.rules]]: the
-- one place namespaces become teams), the unallocated name where nothing maps. Idle GPU time is
-- not a workload (allocation_lines shares it), nor is MIG capacity no pod held. gpu_hours = observed GPU-hours; it_energy_kwh =
-- the GPU boards' energy in those hours (measured, or spread over a counter gap);
-- util_mean = observed-hour-weighted mean GPU utilization (null where no utilization was read).
with workloads as (
    select
        strftime(hour_start, '%Y-%m') as month,
        coalesce(team, getvariable('unallocated')) as team,
        namespace,
        coalesce(pod, '') as pod,
        gpu_hours_observed,
        energy_kwh,
        util_mean,
        resource_id
    from int_gpu_workloads
    where not is_idle and not is_capacity
)

select
    month,
    team,
    namespace,
    pod,
    dsum(gpu_hours_observed) as gpu_hours,
    dsum(energy_kwh) as it_energy_kwh,
    (sum((gpu_hours_observed * util_mean)::decimal(38, 12)) filter (where util_mean is not null)
        / nullif(sum(gpu_hours_observed::decimal(38, 12)) filter (where util_mean is not null), 0))::double as util_mean,
    count(distinct resource_id) as resources
from workloads
group by month, team, namespace, pod
