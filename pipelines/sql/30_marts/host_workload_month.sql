-- Grain: month x host x namespace (workload time only; idle GPU time is no one's run). What the
-- footprint audit matches published training runs and CodeCarbon runs against: which GPUs of
-- which model a workload held, when (first hour, end of the last hour, UTC), for how many
-- observed GPU-hours, and the GPU boards' energy telemetry gave for them. zone as int_energy_lines
-- places the host (its billed resource's zone, else the configured default).
with models as (
    -- the GPU name as telemetry printed it, resolved as gpu_hours resolves it for its specs
    select key, pick(gpu_model) as gpu_model
    from (
        select gpu_key(alias) as key, gpu_model from ref_gpu_aliases
        union
        select gpu_key(gpu_model), gpu_model from ref_gpu_specs
    )
    group by key
),

hours as (
    select
        strftime(w.hour_start, '%Y-%m') as month,
        w.host,
        w.resource_id,
        coalesce(w.team, getvariable('unallocated')) as team,
        w.namespace,
        w.gpu_uuid,
        w.hour_start,
        w.gpu_hours_observed,
        w.energy_kwh,
        m.gpu_model
    from int_gpu_workloads w
    join int_gpu_hours g on g.gpu_uuid = w.gpu_uuid and g.hour_start = w.hour_start
    left join models m on m.key = gpu_key(g.gpu_model_raw)
    where not w.is_idle and not w.is_capacity
),

resources as (
    select resource_id, pick(zone) as zone
    from int_charges_teams
    where resource_id is not null and zone is not null
    group by all
)

select
    h.month,
    h.host,
    pick(h.resource_id) as resource_id,
    mode_det(list(h.team)) as team,
    h.namespace,
    mode_det(list(h.gpu_model)) as gpu_model,
    count(distinct h.gpu_uuid) as gpus,
    min(h.hour_start) as first_hour,
    max(h.hour_start) + interval 1 hour as end_hour,
    dsum(h.gpu_hours_observed) as gpu_hours,
    dsum(h.energy_kwh) as it_energy_kwh,
    coalesce(pick(r.zone), nullif(getvariable('default_zone'), '')) as zone
from hours h
left join resources r on r.resource_id = h.resource_id
group by h.month, h.host, h.namespace
