-- Grain: GPU x UTC hour of an owned cluster's host ([[clusters]] hosts) x claimant: a Slurm job
-- (its month piece) or the cluster's idle capacity. The part of each measured GPU-hour
-- (gpu_hours) that is a job's: int_gpu_workloads gives that part of the hour's energy and time
-- to the job's charge line (resource <cluster>:job:<id>), the rest to the idle line
-- (<cluster>:idle). How a job claims a GPU-hour (claim):
--   hpc_job     dcgm-exporter's HPC job mapping labels the GPU's series with the job: its share is
--               its labelled scrapes over all the GPU-hour's scrapes (two jobs mapped to one GPU
--               split it evenly: the exporter repeats each series once per job)
--   node_share  a job no series labels, on a host of its NodeList: the part of the hour inside its
--               window x its GPUs on the host (its GPUs over its nodes) / the host's GPUs that hour
-- A job's hours are those its window touches: a counter's last reading at its End still counts.
with hosts as (
    select name as host, cluster from cfg_cluster_members where kind = 'host'
),

host_hours as (
    select g.gpu_uuid, g.hour_start, g.host, h.cluster,
        count(*) over (partition by g.host, g.hour_start) as host_gpus
    from int_gpu_hours g
    join hosts h using (host)
),

labelled as (
    select gpu_uuid, hour_start, hpc_job, sum(n_scrapes) as n,
        sum(sum(n_scrapes)) over (partition by gpu_uuid, hour_start) as n_all
    from gpu_pod_parts
    group by gpu_uuid, hour_start, hpc_job
),

by_label as (
    select h.gpu_uuid, h.hour_start, j.cluster, j.job_id, 'hpc_job' as claim, l.n / l.n_all as share
    from labelled l
    join host_hours h on h.gpu_uuid = l.gpu_uuid and h.hour_start = l.hour_start
    join int_cluster_jobs j on j.cluster = h.cluster and j.job_id = l.hpc_job
        and j.month = strftime(l.hour_start, '%Y-%m')
        and l.hour_start >= date_trunc('hour', j.start_utc) and l.hour_start <= j.end_utc
),

unlabelled as (
    select j.cluster, j.job_id, j.gpus, j.piece_start, j.piece_end, n.host, array_length(hostlist(j.node_list)) as n_nodes
    from int_cluster_jobs j
    cross join unnest(hostlist(j.node_list)) n (host)
    left join (select distinct cluster, job_id from by_label) b on b.cluster = j.cluster and b.job_id = j.job_id
    where b.job_id is null
),

by_node as (
    select h.gpu_uuid, h.hour_start, u.cluster, u.job_id, 'node_share' as claim,
        (epoch(least(u.piece_end, h.hour_start + interval 1 hour)) - epoch(greatest(u.piece_start, h.hour_start)))
            / getvariable('s_per_h') * u.gpus / u.n_nodes / h.host_gpus as share
    from unlabelled u
    join host_hours h on h.host = u.host and h.cluster = u.cluster
        and h.hour_start < u.piece_end and h.hour_start + interval 1 hour > u.piece_start
),

claims as (
    select * from by_label
    union all
    select * from by_node
),

idle as (
    -- what no job claims; below zero only where jobs hold more GPUs than the host has
    select h.gpu_uuid, h.hour_start, h.cluster, 1 - coalesce(sum(c.share), 0) as share
    from host_hours h
    left join claims c on c.gpu_uuid = h.gpu_uuid and c.hour_start = h.hour_start
    group by h.gpu_uuid, h.hour_start, h.cluster
)

select strftime(hour_start, '%Y-%m') as month, gpu_uuid, hour_start, cluster || ':job:' || job_id as resource_id, claim, share
from claims
union all
select strftime(hour_start, '%Y-%m'), gpu_uuid, hour_start, cluster || ':idle', 'idle', share
from idle
where share <> 0
