-- Each GPU-hour split between the workloads seen on it, by observed scrapes; scrapes with no
-- pod labels are idle time. Grain: GPU, hour, namespace, pod (namespace null = idle).
with pods as (
    select gpu_uuid, hour_start, nullif(namespace, '') as namespace, nullif(pod, '') as pod, sum(n_scrapes) as n_scrapes
    from gpu_pod_parts
    group by all
),

shares as (
    select *, n_scrapes / sum(n_scrapes) over (partition by gpu_uuid, hour_start) as share
    from pods
)

select
    g.gpu_uuid,
    g.host,
    g.hour_start,
    s.namespace,
    s.pod,
    s.share,
    s.namespace is null as is_idle,
    g.energy_kwh * s.share as energy_kwh,
    g.coverage * s.share as gpu_hours_observed,
    g.energy_tier,
    g.util_mean
from gpu_hours g
join shares s using (gpu_uuid, hour_start)
