-- The first stage of allocation: who receives a source group by what its resource's GPUs show.
-- Grain: month x source group x team x rule; weights are relative within a group (int_alloc_targets
-- adds the later rules; allocation_lines normalises and rounds).
--   direct            a resolved team takes its own charges and its energy (a resource no
--                     telemetry splits)
--   telemetry_split   a billed resource whose GPUs show namespaces: by GPU-hours per team (each
--                     GPU-hour split by its sharing mode first: int_gpu_shares); its teams'
--                     measured energy too
--   unallocated_capacity  its MIG slices no pod held (split rule mig_unallocated): the unallocated team
--   idle:<rule>       its GPU time with no workload, by the [allocation] idle rule over the
--                     teams that used that node (proportional to their GPU-hours, or even), or
--                     weights, or left unallocated; no user -> owner
--   owned_capacity:<rule>  an owned cluster's unallocated capacity (GPU-hours no job held, category
--                     unallocated_capacity), by the idle rule over the teams whose jobs used the cluster
--   unobserved        billed GPU-hours no telemetry covers -> the resource's own team (their
--                     estimated energy too)
--   provider_split    a billed node no telemetry covers, with AWS split cost allocation data:
--                     by its pods' split cost per team; its unused cost -> unallocated_capacity
with node_use as (
    select strftime(w.hour_start, '%Y-%m') as month, w.resource_id, w.is_idle, w.is_capacity,
        case when not w.is_idle then coalesce(w.team, getvariable('unallocated')) end as team,
        dsum(w.gpu_hours_observed) as hours
    from int_gpu_workloads w
    where w.cluster_claim is null    -- an owned cluster's host time is its jobs' and idle lines'
    group by all
),

nodes as (
    select n.month, n.resource_id, dsum(n.hours) as observed_h,
        coalesce(sum(n.hours::decimal(38, 12)) filter (where n.is_idle), 0)::double as idle_h,
        pick(b.billed_h) as billed_h, pick(b.owner) as owner
    from node_use n
    left join (select month, resource_id, dsum(gpu_hours) as billed_h, mode_det(list(resolved_team)) as owner
               from int_charges_teams where resource_id is not null group by all) b
        on b.month = n.month and b.resource_id = n.resource_id
    group by n.month, n.resource_id
),

idle_rule as (
    select rule from cfg_alloc_rules where category = 'idle'
),

idle_split as (
    select u.month, u.resource_id, u.team, 'idle:' || r.rule as rule,
        case r.rule when 'proportional' then u.hours else 1 end as w
    from node_use u cross join idle_rule r
    where not u.is_idle and not u.is_capacity and r.rule in ('proportional', 'even')
    union all
    select n.month, n.resource_id, cw.team, 'idle:weights', cw.weight
    from nodes n cross join cfg_alloc_weights cw cross join idle_rule r
    where r.rule = 'weights'
    union all
    select n.month, n.resource_id, getvariable('unallocated'), 'idle:unallocated', 1
    from nodes n cross join idle_rule r
    where r.rule = 'unallocated'
),

idle_shares as (
    select month, resource_id, team, rule, w / sum(w::decimal(38, 12)) over (partition by month, resource_id)::double as frac
    from (select month, resource_id, team, rule, dsum(w) as w from idle_split where w > 0 group by all)
    union all
    select n.month, n.resource_id, coalesce(n.owner, getvariable('unallocated')),
        case when n.owner is null then 'idle:no_basis' else 'idle:owner' end, 1
    from nodes n
    where not exists (select 1 from idle_split s where s.month = n.month
                      and s.resource_id is not distinct from n.resource_id and s.w > 0)
),

node_targets as (
    select g.month, g.source_group, u.team, case when u.is_capacity then 'unallocated_capacity' else 'telemetry_split' end as rule,
        u.hours as w
    from int_alloc_groups g join node_use u on u.month = g.month and u.resource_id = g.resource_id and not u.is_idle
    where g.kind = 'charge' and g.category in ('direct', 'untagged')
    union all
    select g.month, g.source_group, s.team, s.rule, n.idle_h * s.frac
    from int_alloc_groups g
    join nodes n on n.month = g.month and n.resource_id = g.resource_id
    join idle_shares s on s.month = g.month and s.resource_id = g.resource_id
    where g.kind = 'charge' and g.category in ('direct', 'untagged')
    union all
    select g.month, g.source_group, coalesce(n.owner, getvariable('unallocated')), 'unobserved',
        greatest(coalesce(n.billed_h, 0) - n.observed_h, 0)
    from int_alloc_groups g join nodes n on n.month = g.month and n.resource_id = g.resource_id
    where g.kind = 'charge' and g.category in ('direct', 'untagged')
    -- a node's energy is its teams' already (int_energy_base: each GPU-hour split by its sharing
    -- mode), but it takes the rule the same GPU-hours took on the node's charges, so a line's
    -- cost and energy share one rule (measured: by the team's hours there, MIG capacity apart;
    -- estimated: the billed hours telemetry did not cover, the owner's as the cost's unobserved)
    union all
    select g.month, g.source_group, u.team, case when u.is_capacity then 'unallocated_capacity' else 'telemetry_split' end,
        u.hours
    from int_alloc_groups g join node_use u on u.month = g.month and u.resource_id = g.resource_id and not u.is_idle
        and u.team = g.team
    where g.kind = 'energy' and g.basis = 'measured' and g.category = 'direct'
    union all
    select g.month, g.source_group, g.team, 'unobserved', 1
    from int_alloc_groups g join nodes n on n.month = g.month and n.resource_id = g.resource_id
    where g.kind = 'energy' and g.basis = 'estimated' and g.category = 'direct'
    -- provider_split: AWS split cost allocation data for a node no telemetry covers (int_provider_split),
    -- its charges and its estimated energy alike
    union all
    select g.month, g.source_group, p.team, p.rule, p.weight
    from int_alloc_groups g join int_provider_split p on p.month = g.month and p.resource_id = g.resource_id
    where g.category in ('direct', 'untagged')
        and not exists (select 1 from nodes n where n.month = g.month and n.resource_id = g.resource_id)
),

cluster_use as (
    -- an owned cluster's jobs by team (int_cost_pool_lines): who used it, for its idle line
    select month, billing_account_id as cluster, billing_account_id || ':idle' as idle_resource, team, dsum(gpu_hours) as hours
    from int_charges_teams
    where provider = 'owned' and line_item_type = 'JobUsage'
    group by all
)

select month, source_group, team, rule, w from node_targets where w > 0
union all
-- an owned cluster's unallocated capacity, over the teams that used the cluster (as a node's idle
-- time over the teams that used the node)
select g.month, g.source_group, u.team, 'owned_capacity:' || r.rule, case r.rule when 'proportional' then u.hours else 1 end
from int_alloc_groups g
join cluster_use u on u.month = g.month
    and ((g.kind = 'charge' and u.cluster = g.account) or (g.kind = 'energy' and u.idle_resource = g.resource_id))
cross join idle_rule r
where g.category = 'unallocated_capacity' and r.rule in ('proportional', 'even') and u.hours > 0
union all
select g.month, g.source_group, g.team, 'direct', 1
from int_alloc_groups g
where g.category = 'direct' and g.source_group not in (select source_group from node_targets where w > 0)
union all
select g.month, g.source_group, s.team, s.rule, s.frac
from int_alloc_groups g join idle_shares s on s.month = g.month and s.resource_id is not distinct from g.resource_id
where g.kind = 'energy' and g.category = 'idle'
