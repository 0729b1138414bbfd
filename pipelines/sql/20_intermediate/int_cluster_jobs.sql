-- Grain: Slurm job allocation x month it overlaps. The GPU-hours of each job that ran on an
-- owned cluster ([[clusters]]): its allocation row only (steps run inside it: 123.batch, 123.0
-- add nothing), GPUs x the wall-clock time of its window inside the month. A job belongs to the
-- cluster its sacct Cluster field names, else the one whose partitions hold its partition, else
-- the only cluster configured. A job restated in a later file (same JobID and Start) counts once:
-- the latest file's. Jobs that never started or hold no GPU have no GPU-hours and no row.
with latest as (
    select j.*
    from slurm_jobs j
    join source_files f using (file_id)
    where f.status = 'loaded' and not j.is_step and j.gpus > 0 and j.end_utc > j.start_utc
    qualify row_number() over (partition by j.job_id, j.start_utc order by j.file_id desc, j.row_number desc) = 1
),

placed as (
    select l.* exclude (cluster), coalesce(named.cluster, by_partition.cluster, only_one.cluster) as cluster
    from latest l
    left join cfg_clusters named on named.cluster = l.cluster
    left join (select name, pick(cluster) as cluster from cfg_cluster_members where kind = 'partition' group by name) by_partition
        on by_partition.name = l.partition
    left join (select pick(cluster) as cluster from cfg_clusters having count(*) = 1) only_one on true
),

pieces as (
    select p.*, m.month_start,
        greatest(p.start_utc, m.month_start) as piece_start,
        least(p.end_utc, m.month_start + interval 1 month) as piece_end
    from placed p,
         unnest(month_starts(p.start_utc, p.end_utc)) m (month_start)
    where p.cluster is not null
)

select
    cluster,
    strftime(month_start, '%Y-%m') as month,
    month_start,
    job_id,
    start_utc,
    end_utc,
    piece_start,
    piece_end,
    account,
    user_name,
    partition,
    job_name,
    gpus,
    node_list,
    -- Slurm's energy of the job's nodes over its whole window (every month piece carries it)
    consumed_energy_j,
    gpus * (epoch(piece_end) - epoch(piece_start)) / getvariable('s_per_h') as gpu_hours,
    file_id,
    row_number
from pieces
