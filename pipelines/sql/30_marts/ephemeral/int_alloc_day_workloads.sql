-- Grain: month x day x resource x idle x claimed x team x namespace x pod x sharing_mode x
-- split_rule x telemetry file. The observed GPU-hours, util-weighted hours and IT energy of
-- int_gpu_workloads by day, each hour in the telemetry file it came from (of several, the first
-- in sha256 order: int_file_ranks). Ephemeral: inlined into its readers.
with hour_files as (
    select p.gpu_uuid, p.hour_start, min(f.file_rank) as file_rank
    from gpu_hour_parts p join int_file_ranks f using (file_id)
    group by all
)

select strftime(w.hour_start, '%Y-%m') as month, w.hour_start::date as day, w.resource_id,
    w.is_idle and coalesce(w.cluster_claim, 'idle') = 'idle' as is_idle, w.cluster_claim is not null as claimed, w.team,
    w.namespace, w.pod, w.sharing_mode, w.split_rule, h.file_rank,
    dsum(w.gpu_hours_observed) as hours, dsum(w.gpu_hours_observed * w.util_mean) as util_hours,
    dsum(w.energy_kwh) as energy_kwh
from int_gpu_workloads w
left join hour_files h on h.gpu_uuid = w.gpu_uuid and h.hour_start = w.hour_start
group by all
