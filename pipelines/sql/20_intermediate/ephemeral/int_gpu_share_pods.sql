-- Grain: GPU x hour x MIG instance x namespace x pod. What each workload seen on a GPU-hour
-- brings to its share (int_gpu_shares): its samples and activity, the share of the GPU its MIG
-- profile holds (slice_frac, by mig_slices), and its mean GPU requests in the hour (gpu_units;
-- fraction: HAMi cores or memory percentage, else a run:ai fraction). Ephemeral: inlined into the
-- models that read it. Variables: mig_slices, percent.
with parts as (
    select
        gpu_uuid, hour_start, coalesce(mig_instance, '') as instance, nullif(namespace, '') as namespace,
        nullif(pod, '') as pod, pick(mig_profile) as mig_profile, bool_or(coalesce(vgpu, '') <> '') as has_vgpu,
        sum(n_scrapes) as n, sum(gr_active_sum) / nullif(sum(n_gr_active), 0) as gr_active,
        min(first_ts) as first_ts, max(last_ts) as last_ts
    from gpu_pod_parts
    group by gpu_uuid, hour_start, coalesce(mig_instance, ''), nullif(namespace, ''), nullif(pod, '')
),

mig as (
    -- a profile's share of its GPU, under every name the GPU goes by
    select distinct
        gpu_key(a.name) as key, m.profile,
        case when getvariable('mig_slices') = 'memory' then m.memory_slices / m.max_memory_slices
             else m.compute_slices / m.max_compute_slices end as slice_frac
    from (
        select alias as name, gpu_model from ref_gpu_aliases
        union all
        select gpu_model as name, gpu_model from ref_mig_profiles
        union all
        select 'NVIDIA ' || gpu_model as name, gpu_model from ref_mig_profiles
    ) a
    join ref_mig_profiles m on m.gpu_model = a.gpu_model
),

requests as (
    -- each pod's mean request in the hour, summed over its containers, per kind of GPU resource
    select hour_start, namespace, pod,
        sum(v) filter (where key = 'nvidia_com_gpu') as gpu_units,
        coalesce(coalesce(sum(v) filter (where key = 'nvidia_com_gpucores'),
                          sum(v) filter (where key = 'nvidia_com_gpumem_percentage')) / getvariable('percent'),
                 sum(v) filter (where key = 'runai_gpu_fraction')) as fraction
    from (select hour_start, namespace, pod, container, resource_key(resource) as key, sum(value_sum) / sum(n_samples) as v
          from gpu_request_parts where kind = 'request' group by hour_start, namespace, pod, container, resource_key(resource))
    group by hour_start, namespace, pod
)

select p.*, m.slice_frac, r.gpu_units, r.fraction,
    sum(p.n) over (partition by p.gpu_uuid, p.hour_start, p.instance) as instance_n
from parts p
left join int_gpu_hours g on g.gpu_uuid = p.gpu_uuid and g.hour_start = p.hour_start
left join mig m on m.key = gpu_key(g.gpu_model_raw) and m.profile = regexp_replace(p.mig_profile, '[+].*$', '')
left join requests r on r.hour_start = p.hour_start and r.namespace = p.namespace and r.pod = p.pod
