-- Each GPU-hour split between the workloads seen on it, by observed scrapes; scrapes with no
-- pod labels are idle time. Grain: GPU, hour, namespace, pod (namespace null = idle).
-- team: [teams.namespaces] first, then the first [[teams.rules]] with field = namespace; null
-- for idle time and for a namespace nothing maps (allocation_lines shows it as unallocated).
with pods as (
    select gpu_uuid, hour_start, nullif(namespace, '') as namespace, nullif(pod, '') as pod, sum(n_scrapes) as n_scrapes
    from gpu_pod_parts
    group by all
),

shares as (
    select *, n_scrapes / sum(n_scrapes) over (partition by gpu_uuid, hour_start) as share
    from pods
),

namespace_rules as (
    select n.namespace, arg_min(r.team, r.ord) as team
    from (select distinct namespace from pods where namespace is not null) n
    join cfg_team_rules r on r.field = 'namespace' and regexp_matches(n.namespace, r.pattern)
    group by all
)

select
    g.gpu_uuid,
    g.host,
    g.hour_start,
    s.namespace,
    s.pod,
    s.share,
    s.namespace is null as is_idle,
    coalesce(nt.team, nr.team) as team,
    g.energy_kwh * s.share as energy_kwh,
    g.coverage * s.share as gpu_hours_observed,
    g.energy_tier,
    g.util_mean
from gpu_hours g
join shares s using (gpu_uuid, hour_start)
left join cfg_namespace_teams nt on nt.namespace = s.namespace
left join namespace_rules nr on nr.namespace = s.namespace
