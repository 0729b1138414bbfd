-- Each GPU-hour split between the workloads seen on it by its sharing mode (int_gpu_shares: whole,
-- MIG, time-sliced, fractional); time no workload held is idle, a MIG GPU's slices no pod held
-- are capacity (team: the unallocated name). Grain: GPU, hour, MIG instance, namespace, pod
-- (namespace null = idle or capacity). GPU-hours (and so cost) follow share, energy (and so
-- CO2e) energy_share. An hour that only a counter gap reaches follows the shares of its
-- share_hour (int_gpu_hours.sql).
-- team: [teams.namespaces] first, then the first [[teams.rules]] with field = namespace; null
-- for idle time and for a namespace nothing maps (allocation_lines shows it as unallocated).
-- resource_id: the billed resource the GPU sits in, resolved here once for every model
-- downstream; first hit wins, and resource_match says which ('hosts' | 'label' | 'host_name'):
--   hosts      [hosts] in meterbook.toml names the host (explicit beats inferred: a wrong or
--              missing label is fixed there)
--   label      the series' cloud instance id label (instance_label in macros.sql), spelled as
--              the bill spells it when a charge has it, kept as labelled otherwise
--   host_name  the host is itself a billed resource id (nodes named after their instance)
-- null when none applies; findings_month reports such hosts (unmatched_host).
-- An owned cluster's host: each GPU-hour split between the Slurm jobs that claim it and the
-- cluster's idle capacity (int_cluster_gpu_claims: cluster_claim says how, resource_match
-- 'cluster'); its time, energy and resource follow the claim's share.
with billed_ids as (
    -- matched without case: Azure writes one ARM id in several casings (resourceGroups,
    -- resourcegroups), and AWS and GCP ids are lower case anyway
    select lower(resource_id) as id_key, min(resource_id) as resource_id
    from charges where resource_id is not null
    group by all
),

shares as (
    select * from int_gpu_shares
),

namespace_rules as (
    select n.namespace, arg_min(r.team, r.ord) as team
    from (select distinct namespace from shares where namespace is not null) n
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
    s.namespace is null and not s.is_capacity as is_idle,
    s.is_capacity,
    s.sharing_mode,
    s.split_rule,
    s.energy_rule,
    s.mig_instance,
    case when s.is_capacity then getvariable('unallocated') else coalesce(nt.team, nr.team) end as team,
    g.energy_kwh * s.energy_share * coalesce(c.share, 1) as energy_kwh,
    g.coverage * s.share * coalesce(c.share, 1) as gpu_hours_observed,
    -- GPU time whose energy is known (observed, or inside a counter gap): the billed hours
    -- beyond it are the ones int_energy_lines estimates
    g.energy_coverage * s.energy_share * coalesce(c.share, 1) as gpu_hours_energy_known,
    g.energy_tier,
    g.util_mean,
    coalesce(c.resource_id, h.resource_id, bl.resource_id, g.instance_id, bh.resource_id) as resource_id,
    c.claim as cluster_claim,
    case when c.resource_id is not null then 'cluster' when h.resource_id is not null then 'hosts' when g.instance_id is not null then 'label'
         when bh.resource_id is not null then 'host_name' end as resource_match
from int_gpu_hours g
join shares s on s.gpu_uuid = g.gpu_uuid and s.hour_start = g.share_hour
left join cfg_namespace_teams nt on nt.namespace = s.namespace
left join namespace_rules nr on nr.namespace = s.namespace
left join cfg_hosts h on h.host = g.host
left join billed_ids bl on bl.id_key = lower(g.instance_id)
left join billed_ids bh on bh.id_key = lower(g.host)
left join int_cluster_gpu_claims c on c.gpu_uuid = g.gpu_uuid and c.hour_start = g.hour_start
