-- Who receives each source group, by which rule, with what weight. Grain: month x source group
-- x team x rule; weights are relative within a group (allocation_lines normalises and rounds).
-- The rules that look at a resource's GPUs (direct, telemetry_split, unallocated_capacity,
-- idle:<rule>, unobserved, provider_split) are int_alloc_first_stage's; then:
--   <category>:<rule> untagged, shared_services, commitment, credits: proportional to each
--                     team's directly attributed billed cost (energy groups: facility kWh) in
--                     the month and currency, even over those teams, weights, or unallocated
--   credits:follows   a credit goes where the charges of its resource (else its service in the
--                     same account) went, in proportion to their billed cost
--   owned_capacity:<rule>  an owned cluster's unallocated capacity by the idle rule's weights, or
--                     left unallocated (proportional and even are int_alloc_first_stage's)
--   <category>:no_basis  nothing to share over: left with the unallocated team, visible
--                     (owned_capacity:no_basis for an owned cluster's unallocated capacity)
with billed as (
    select source_group, amount as billed from int_alloc_sources where meter = 'billed_cost'
),

basis as (
    select g.month, g.kind, g.currency, f.team,
        greatest(dsum(coalesce(case g.kind when 'charge' then b.billed else e.amount end, 0) * f.w / f.total), 0) as w
    from (select *, sum(w::decimal(38, 12)) over (partition by source_group)::double as total from int_alloc_first_stage) f
    join int_alloc_groups g using (source_group)
    left join billed b using (source_group)
    left join int_alloc_sources e on e.source_group = f.source_group and e.meter = 'facility_energy_kwh'
    -- an owned cluster's pool (int_cost_pool_lines) is no bill: it moves no share of the bills'
    -- shared services, commitments or credits
    where g.service_name is distinct from 'Owned GPU cluster'
    group by all
),

by_rule as (
    -- an owned cluster's unallocated capacity follows the idle rule, under its own name
    select g.source_group, case g.category when 'unallocated_capacity' then 'owned_capacity' else g.category end as category,
        r.rule, g.month, g.kind, g.currency
    from int_alloc_groups g
    join cfg_alloc_rules r on r.category = case g.category when 'unallocated_capacity' then 'idle' else g.category end
    where (g.category in ('untagged', 'shared_services', 'commitment')
           or (g.kind = 'charge' and g.category in ('idle', 'unallocated_capacity') and r.rule in ('weights', 'unallocated')))
      and g.source_group not in (select source_group from int_alloc_first_stage)
),

rule_targets as (
    select rg.source_group, b.team, rg.category || ':' || rg.rule as rule,
        case rg.rule when 'proportional' then b.w else 1 end as w
    from by_rule rg
    join basis b on b.month = rg.month and b.kind = rg.kind and b.currency is not distinct from rg.currency
    where rg.rule in ('proportional', 'even') and b.w > 0
    union all
    select rg.source_group, cw.team, rg.category || ':weights', cw.weight
    from by_rule rg cross join cfg_alloc_weights cw where rg.rule = 'weights'
    union all
    select rg.source_group, getvariable('unallocated'), rg.category || ':unallocated', 1
    from by_rule rg where rg.rule = 'unallocated'
),

settled as (
    select source_group, team, rule, w from int_alloc_first_stage
    union all
    select source_group, team, rule, w from rule_targets where w > 0
),

related as (
    select c.source_group, g.source_group as related_group
    from int_alloc_groups c
    join int_alloc_groups g on g.month = c.month and g.kind = 'charge' and g.currency = c.currency
        and g.category in ('direct', 'untagged')
        and ((c.resource_id is not null and g.resource_id = c.resource_id)
             or (c.resource_id is null and g.service_name = c.service_name and g.account = c.account))
    where c.category = 'credits'
),

follows as (
    select r.source_group, t.team, 'credits:follows' as rule,
        dsum(abs(b.billed) * t.w / t.total) as w
    from related r
    join (select *, sum(w::decimal(38, 12)) over (partition by source_group)::double as total from settled) t on t.source_group = r.related_group
    join billed b on b.source_group = r.related_group
    group by all
    having dsum(abs(b.billed) * t.w / t.total) > 0
),

credit_rule as (
    select g.source_group, r.rule, g.month, g.kind, g.currency
    from int_alloc_groups g join cfg_alloc_rules r on r.category = 'credits'
    where g.category = 'credits' and g.source_group not in (select source_group from follows)
),

credit_targets as (
    select cr.source_group, b.team, 'credits:' || cr.rule as rule,
        case cr.rule when 'proportional' then b.w else 1 end as w
    from credit_rule cr
    join basis b on b.month = cr.month and b.kind = cr.kind and b.currency is not distinct from cr.currency
    where cr.rule in ('proportional', 'even') and b.w > 0
    union all
    select cr.source_group, cw.team, 'credits:weights', cw.weight
    from credit_rule cr cross join cfg_alloc_weights cw where cr.rule = 'weights'
    union all
    select cr.source_group, getvariable('unallocated'), 'credits:unallocated', 1
    from credit_rule cr where cr.rule = 'unallocated'
),

all_targets as (
    select * from settled
    union all
    select * from follows
    union all
    select * from credit_targets where w > 0
)

select g.month, g.source_group, t.team, t.rule, dsum(t.w) as weight
from all_targets t join int_alloc_groups g using (source_group)
group by all
union all
select g.month, g.source_group, getvariable('unallocated'),
    case g.category when 'unallocated_capacity' then 'owned_capacity' else g.category end || ':no_basis', 1
from int_alloc_groups g
where g.source_group not in (select source_group from all_targets)
