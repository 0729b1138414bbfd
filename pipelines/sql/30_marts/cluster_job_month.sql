-- Grain: month x owned cluster x Slurm job x team. The jobs of an owned cluster ([[clusters]],
-- int_cluster_jobs) as a team page lists its jobs beside the pods telemetry saw (workload_month):
-- the job's charge line (resource <cluster>:job:<id>) as the allocation gave it to its team.
-- gpu_hours = the GPU-hours the job held, from its accounting (GPUs x its window in the month);
-- gpu_hours_observed = the part telemetry saw (int_cluster_gpu_claims), 0 where none did;
-- it_energy_kwh = its GPUs' IT energy (measured where telemetry or DCGM job statistics saw it,
-- else estimated: int_energy_base); util_mean = effective over observed GPU-hours (null where no
-- utilization was read); effective_cost = its share of the cost pool, in the pool's currency.
with jobs as (
    select cluster, month, job_id, account, user_name, job_name, cluster || ':job:' || job_id as resource_id
    from int_cluster_jobs
),

lines as (
    select month, team, resource_id, currency,
        sum(amount) filter (where meter = 'gpu_hours')::double as gpu_hours,
        sum(amount) filter (where meter = 'gpu_hours_observed')::double as gpu_hours_observed,
        sum(amount) filter (where meter = 'effective_gpu_hours')::double as effective_gpu_hours,
        sum(amount) filter (where meter = 'it_energy_kwh')::double as it_energy_kwh,
        sum(amount) filter (where meter = 'effective_cost') as effective_cost
    from allocation_lines
    where resource_id in (select j.resource_id from jobs j)
    group by month, team, resource_id, currency
),

by_team as (
    -- money lines carry the pool's currency, energy and time lines none: one row per team
    select month, team, resource_id, max(currency) as currency,
        coalesce(dsum(gpu_hours), 0) as gpu_hours,
        coalesce(dsum(gpu_hours_observed), 0) as gpu_hours_observed,
        dsum(effective_gpu_hours) as effective_gpu_hours,
        coalesce(dsum(it_energy_kwh), 0) as it_energy_kwh,
        coalesce(sum(effective_cost), 0) as effective_cost
    from lines
    group by month, team, resource_id
)

select
    j.month,
    j.cluster,
    j.job_id,
    b.team,
    j.account,
    j.user_name,
    j.job_name,
    b.currency,
    b.gpu_hours,
    b.gpu_hours_observed,
    b.it_energy_kwh,
    b.effective_gpu_hours / nullif(b.gpu_hours_observed, 0) as util_mean,
    b.effective_cost
from jobs j
join by_team b on b.month = j.month and b.resource_id = j.resource_id
