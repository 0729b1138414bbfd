-- Grain: job window x month x GPU x hour x workload row (basis telemetry), or job window x month
-- x billed resource (basis billed). The GPU time each job of the work log takes, and where.
-- telemetry: the int_gpu_workloads rows the job's placement covers in its window.
--   namespace placement: its namespace's busy rows (and pod, a name or glob) on the hours the
--     window touches; host placement: the rows of its host's GPUs (gpu_uuids, else all), busy or
--     idle - a job pinned by host runs where telemetry may carry no pod labels.
--   A pod names the job's own pods, whose rows already hold only the time they ran: an hour the
--   window touches counts whole. Without a pod the row counts for the part of the hour inside
--   the window. Two jobs claiming more than a whole row share it in proportion (never counted twice;
--   their claims summed as decimals, the same in any row order).
--   team: the row's team; time telemetry saw idle, the team owning the billed resource.
-- billed: a job placed on a host whose billed resource has no telemetry in the month takes the
--   resource's billed GPU-hours inside its window (its share of the node: gpus or gpu_uuids over
--   the instance's GPU count), flagged as estimated.
-- peak_flops: the dense peak of the GPU's model for the job's precision (ref_gpu_specs).
with windows as (
    select * from int_job_windows
),

gpu_models as (
    select gpu_key(alias) as key, gpu_model from ref_gpu_aliases
    union
    select gpu_key(gpu_model), gpu_model from ref_gpu_specs
),

workloads as (
    select w.*, strftime(w.hour_start, '%Y-%m') as month, g.tensor_active_mean, m.gpu_model
    from int_gpu_workloads w
    join int_gpu_hours g using (gpu_uuid, hour_start)
    left join gpu_models m on m.key = gpu_key(g.gpu_model_raw)
),

placed as (
    select j.job_id, j.start_utc, j.end_utc, j.month, j.pod as job_pod, j.precision, j.gpu_model as job_gpu_model, w.*
        exclude (w.month, w.gpu_model), w.gpu_model as tel_gpu_model
    from windows j
    join workloads w on w.month = j.month and w.namespace = j.namespace
    where not w.is_idle and (j.pod is null or w.pod glob j.pod) and (j.host is null or w.host = j.host)
        and (array_length(j.gpu_uuids) = 0 or list_contains(j.gpu_uuids, w.gpu_uuid))
    union all by name
    select j.job_id, j.start_utc, j.end_utc, j.month, j.pod as job_pod, j.precision, j.gpu_model as job_gpu_model, w.*
        exclude (w.month, w.gpu_model), w.gpu_model as tel_gpu_model
    from windows j
    join workloads w on w.month = j.month and w.host = j.host
    where j.namespace is null and (array_length(j.gpu_uuids) = 0 or list_contains(j.gpu_uuids, w.gpu_uuid))
),

in_window as (
    select *,
        case when job_pod is not null then 1.0
             else (epoch(least(end_utc, hour_start + interval 1 hour)) - epoch(greatest(start_utc, hour_start)))
                  / getvariable('s_per_h') end as frac
    from placed
    where hour_start < end_utc and hour_start + interval 1 hour > start_utc
),

shared as (
    select *, frac / greatest(1.0, sum(frac::decimal(38, 12)) over (partition by gpu_uuid, hour_start, namespace, pod)::double) as claim
    from in_window
),

owners as (
    select month, resource_id, mode_det(list(resolved_team)) as owner
    from int_charges_teams where resource_id is not null group by all
),

telemetry as (
    select s.job_id, s.start_utc, s.month, 'telemetry' as basis, s.is_idle,
        case when s.is_idle then coalesce(o.owner, getvariable('unallocated'))
             else coalesce(s.team, getvariable('unallocated')) end as team,
        s.resource_id, s.gpu_uuid, s.hour_start, s.precision,
        coalesce(s.tel_gpu_model, s.job_gpu_model) as gpu_model,
        s.gpu_hours_observed * s.claim as gpu_hours,
        s.energy_kwh * s.claim as it_energy_kwh,
        s.util_mean, s.tensor_active_mean
    from shared s
    left join owners o on o.month = s.month and o.resource_id = s.resource_id
    where s.claim > 0
),

observed_resources as (
    select distinct strftime(hour_start, '%Y-%m') as month, resource_id from int_gpu_workloads where resource_id is not null
),

host_resources as (
    -- as int_gpu_workloads resolves a host: [hosts] first, else a billed id equal to the host name
    select j.*, coalesce(h.resource_id, b.resource_id) as resource_id
    from windows j
    left join cfg_hosts h on h.host = j.host
    left join (select distinct lower(resource_id) as id_key, resource_id from charges where resource_id is not null) b
        on b.id_key = lower(j.host)
    where j.host is not null
        and not exists (select 1 from telemetry t where t.job_id = j.job_id and t.start_utc = j.start_utc and t.month = j.month)
),

billed as (
    select j.job_id, j.start_utc, j.month, 'billed' as basis, false as is_idle,
        coalesce(o.owner, getvariable('unallocated')) as team, j.resource_id, null::varchar as gpu_uuid,
        null::timestamp as hour_start, j.precision, coalesce(c.gpu_model, j.gpu_model) as gpu_model,
        c.gpu_hours
            * greatest(0, epoch(least(j.piece_end, coalesce(c.charge_period_end, c.charge_period_start + interval 1 hour)))
                          - epoch(greatest(j.piece_start, c.charge_period_start)))
            / (epoch(coalesce(c.charge_period_end, c.charge_period_start + interval 1 hour)) - epoch(c.charge_period_start))
            * least(1.0, coalesce(j.gpus, nullif(array_length(j.gpu_uuids), 0), c.gpu_count) / c.gpu_count) as gpu_hours,
        null::double as it_energy_kwh, null::double as util_mean, null::double as tensor_active_mean
    from host_resources j
    join int_charges_teams c on c.resource_id = j.resource_id and c.month = j.month and c.gpu_hours > 0
    left join owners o on o.month = j.month and o.resource_id = j.resource_id
    where not exists (select 1 from observed_resources r where r.month = j.month and r.resource_id = j.resource_id)
        and c.charge_period_start < j.piece_end
        and coalesce(c.charge_period_end, c.charge_period_start + interval 1 hour) > j.piece_start
)

select c.*, s.value as peak_flops, s.low as peak_flops_low, s.high as peak_flops_high, s.coefficient_id as peak_id
from (
    select * from telemetry
    union all by name
    select * from billed
) c
left join ref_gpu_specs s on s.gpu_model = c.gpu_model and s.metric = 'peak_flops_' || c.precision
