-- AWS split cost allocation data as an allocation basis (int_alloc_first_stage, for the nodes no
-- telemetry covers). Grain: month x parent instance (resource_id) x team x rule:
--   provider_split        the split cost of the instance's pods, per team
--   unallocated_capacity  the instance's unused cost (paid for, used by no pod): the unallocated team
-- weight in the billing currency; a month's weights are relative (the parent's charges are
-- what int_alloc_targets splits). A pod's team as telemetry's pods get theirs
-- (int_gpu_workloads): [teams.namespaces], then the first [[teams.rules]] with field =
-- namespace; then its Kubernetes labels as billing tags (tag_keys); else unallocated. Its
-- namespace is the aws:eks:namespace tag (CUR 2.0 aws_eks_namespace), else the pod ARN's
-- (arn:aws:eks:<region>:<account>:pod/<cluster>/<namespace>/<pod>/<uid>).
with pods as (
    select
        strftime(coalesce(billing_period_start, charge_period_start), '%Y-%m') as month,
        split_parent_id as resource_id,
        coalesce(tags['aws:eks:namespace'], tags['aws_eks_namespace'],
                 case when resource_id like '%:pod/%' then split_part(resource_id, '/', 3) end) as namespace,
        list_filter(list_transform(getvariable('tag_keys'), lambda k: team_name(tags[k])), lambda t: t is not null)[1]
            as label_team,
        split_cost,
        coalesce(split_unused_cost, 0) as unused_cost
    from charges
    where split_parent_id is not null
),

namespace_rules as (
    select n.namespace, arg_min(r.team, r.ord) as team
    from (select distinct namespace from pods where namespace is not null) n
    join cfg_team_rules r on r.field = 'namespace' and regexp_matches(n.namespace, r.pattern)
    group by n.namespace
),

teamed as (
    select
        p.month, p.resource_id, p.split_cost, p.unused_cost,
        coalesce(nt.team, nr.team, p.label_team, getvariable('unallocated')) as team
    from pods p
    left join cfg_namespace_teams nt on p.namespace = nt.namespace
    left join namespace_rules nr on p.namespace = nr.namespace
)

select month, resource_id, team, 'provider_split' as rule, sum(split_cost) as weight
from teamed
group by month, resource_id, team
union all
select month, resource_id, getvariable('unallocated') as team, 'unallocated_capacity' as rule, sum(unused_cost) as weight
from teamed
group by month, resource_id
