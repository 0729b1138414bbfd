-- Grain: month x finding x subject, in the shape of findings_month (which unions it in): GPUs and
-- GPU requests that sat idle or under-used, with the money at stake.
--   low_utilization     a busy GPU with more than low_util_min_hours hours under low_util_threshold
--   requested_idle      per pod (namespace/pod): GPU-hours it held under a GPU request
--                       (kube-state-metrics) while its GPU was under low_util_threshold, and
--                       their cost at the resource's rate
--   idle_gpu_hours      per billed resource: GPU time with no workload and its effective cost
--                       cost_usd = the cost of its unused share, hours x rate x (1 - utilization)
-- payers: a finding on a GPU or a pod is about that part of the resource, not the whole node:
-- the teams whose workloads held the hours it counts (a MIG slice's or a time-sliced GPU's pods
-- by their share), each with its GPU-hours, which the node's rate makes its share of the cost
-- (findings_ranked turns them into paying_teams). Null for idle_gpu_hours: it is the node's.
with thr as (
    select
        (select value from int_findings_params where assumption_id = 'findings_low_util_threshold') as util,
        (select value from int_findings_params where assumption_id = 'findings_low_util_min_hours') as min_h
),

owned as (
    -- the resources of owned clusters' cost pools (int_cost_pool_lines)
    select distinct resource_id from int_charges_teams where provider = 'owned' and resource_id is not null
),

resource_rate as (
    select month, resource_id, sum(effective_cost)::double / nullif(dsum(gpu_hours), 0) as usd_per_gpu_h
    from int_charges_teams where gpu_hours > 0 group by all
),

low_util_teams as (
    -- a busy GPU's low hours by the team that held them (the unallocated name for a namespace
    -- nothing maps, as allocation_lines shows it)
    select strftime(w.hour_start, '%Y-%m') as month, w.host, w.gpu_uuid, w.resource_id,
        coalesce(w.team, getvariable('unallocated')) as team, count(*) as n,
        dsum(w.gpu_hours_observed) as hours, dsum(w.gpu_hours_observed * w.util_mean) as util_hours
    from int_gpu_workloads w cross join thr
    where not w.is_idle and w.util_mean < thr.util
    group by all
),

low_util as (
    select month, host, gpu_uuid, resource_id,
        -- the team of most of its hours' rows, ties to the smallest (mode_det over the rows)
        list(team order by n desc, team asc)[1] as team,
        dsum(hours) as hours, dsum(util_hours) / dsum(hours) as util,
        -- list_filter, not FILTER (WHERE): Spark's ordered list takes no filter clause
        list_filter(list({'team': team, 'weight': hours} order by hours desc, team asc), lambda p: p.weight > 0) as payers
    from low_util_teams
    group by all
),

requested as (
    -- pod-hours that held a GPU request: nvidia.com/gpu, a MIG or a HAMi resource
    select distinct hour_start, namespace, pod
    from gpu_request_parts
    where kind = 'request' and resource_key(resource) like 'nvidia_com_%' and value_sum > 0
),

requested_idle as (
    select strftime(w.hour_start, '%Y-%m') as month, w.namespace || '/' || w.pod as subject, pick(w.resource_id) as resource_id,
        mode_det(list(coalesce(w.team, getvariable('unallocated')))) as team, dsum(w.gpu_hours_observed) as hours
    from int_gpu_workloads w
    join requested q on q.hour_start = w.hour_start and q.namespace = w.namespace and q.pod = w.pod
    cross join thr
    where w.util_mean < thr.util
    group by strftime(w.hour_start, '%Y-%m'), w.namespace, w.pod
)

select month, 'low_utilization' as finding, coalesce(low_util.host, 'no host label') || '/' || low_util.gpu_uuid as subject, resource_id, low_util.team,
    low_util.hours as value, 'h' as unit, low_util.hours as low, low_util.hours as high,
    low_util.hours * r.usd_per_gpu_h * (1 - low_util.util) as cost_usd, null::double as energy_kwh,
    printf('%.1f h at %.0f%% mean utilization (threshold %.0f%%): the unused %.0f%% of its %.0f USD is at stake',
           low_util.hours, 100 * low_util.util, 100 * thr.util, 100 * (1 - low_util.util), low_util.hours * r.usd_per_gpu_h) as detail,
    (select list(coefficient_id) from int_findings_params
     where assumption_id in ('findings_low_util_threshold', 'findings_low_util_min_hours')) as assumption_ids,
    low_util.payers
from low_util cross join thr left join resource_rate r using (month, resource_id)
where low_util.hours > thr.min_h
union all
select q.month, 'requested_idle', q.subject, q.resource_id, q.team, q.hours, 'h', null, null,
    q.hours * r.usd_per_gpu_h, null,
    printf('%.1f GPU-h held under a GPU request with the GPU below %.0f%% utilization: release the request or share the GPU',
           q.hours, 100 * thr.util),
    (select list(coefficient_id) from int_findings_params where assumption_id = 'findings_low_util_threshold'),
    -- a pod is one namespace's, so one team's
    [{'team': q.team, 'weight': q.hours}]
from requested_idle q cross join thr left join resource_rate r using (month, resource_id)
where q.hours > 0
union all
select l.month, 'idle_gpu_hours', coalesce(l.resource_id, 'no billed resource'), l.resource_id, null,
    sum(l.amount) filter (where l.meter = 'gpu_hours_observed')::double, 'h', null, null,
    -- an owned cluster's unallocated capacity saves nothing by scaling down: its capital is spent
    case when o.resource_id is null then sum(l.amount) filter (where l.meter = 'effective_cost')::double end, null,
    case when o.resource_id is not null
         then 'unallocated capacity of an owned cluster (GPU-hours no job held), its share of the cost pool shared by the idle rule: the capital is '
              || 'spent, so nothing is saved by stopping it; fill it with work or size the next purchase to the use'
         else 'idle GPU time (no workload) on the resource and its effective cost, shared by the idle rule' end,
    []::varchar[], null
from allocation_lines l left join owned o on o.resource_id = l.resource_id
where l.rule like 'idle:%' or l.rule like 'owned_capacity:%' group by l.month, l.resource_id, o.resource_id
