-- Grain: Slurm job x month (int_cluster_jobs) of a job no telemetry series reaches (none of its
-- GPU-hours in int_cluster_gpu_claims): its IT energy from the job's own records, by tier:
--   dcgm_job_stats     dcgmi stats --job: each GPU's measured energy over the job (the summary
--                      block, which adds them up, is not counted again), the month's part by the
--                      share of the job's time in it. Measured: a counter's range is its reading.
--   slurm_node_energy  sacct's ConsumedEnergyRaw is its nodes' energy over the job, every job on
--                      a node given the whole node's: the job's GPU share of its nodes (its GPUs
--                      over its nodes x the cluster's GPUs per host) is its estimate; the range
--                      runs from that share to the nodes' whole energy, the most it can be.
-- A job with neither keeps the rated-power estimate (int_energy_base: tdp_model).
with claimed as (
    select distinct resource_id, month from int_cluster_gpu_claims where claim <> 'idle'
),

jobs as (
    select j.*, j.cluster || ':job:' || j.job_id as resource_id,
        (epoch(j.piece_end) - epoch(j.piece_start)) / (epoch(j.end_utc) - epoch(j.start_utc)) as piece_frac
    from int_cluster_jobs j
    left join claimed c on c.resource_id = j.cluster || ':job:' || j.job_id and c.month = j.month
    where c.resource_id is null
),

stats as (
    select job_id, dsum(energy_j) as energy_j
    from dcgm_job_stats
    where gpu_id is not null
    group by job_id
),

host_gpus as (
    select c.cluster, c.gpus / count(*) as gpus_per_host
    from cfg_clusters c
    join cfg_cluster_members h on h.cluster = c.cluster and h.kind = 'host'
    group by c.cluster, c.gpus
),

tiers as (
    select j.month, j.resource_id, j.gpu_hours, 'measured' as basis, 'dcgm_job_stats' as tier,
        s.energy_j * j.piece_frac / (getvariable('w_per_kw') * getvariable('s_per_h')) as it_energy_kwh,
        s.energy_j * j.piece_frac / (getvariable('w_per_kw') * getvariable('s_per_h')) as it_energy_kwh_low,
        s.energy_j * j.piece_frac / (getvariable('w_per_kw') * getvariable('s_per_h')) as it_energy_kwh_high
    from jobs j
    join stats s on s.job_id = j.job_id
    union all
    select j.month, j.resource_id, j.gpu_hours, 'estimated', 'slurm_node_energy',
        j.consumed_energy_j * j.piece_frac * j.gpus / (array_length(hostlist(j.node_list)) * h.gpus_per_host) / (getvariable('w_per_kw') * getvariable('s_per_h')),
        j.consumed_energy_j * j.piece_frac * j.gpus / (array_length(hostlist(j.node_list)) * h.gpus_per_host) / (getvariable('w_per_kw') * getvariable('s_per_h')),
        j.consumed_energy_j * j.piece_frac / (getvariable('w_per_kw') * getvariable('s_per_h'))
    from jobs j
    join host_gpus h on h.cluster = j.cluster
    left join stats s on s.job_id = j.job_id
    where s.job_id is null and j.consumed_energy_j > 0
)

select * from tiers
