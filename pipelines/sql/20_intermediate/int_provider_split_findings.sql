-- Grain: month x node x team, in the shape of findings_month (which unions it in).
--   provider_split_differs  a node both telemetry and AWS split cost allocation data cover, where
--                           a team's share of the node's busy GPU-hours (telemetry: what meterbook
--                           allocates by) and its share of the pods' split cost (AWS; unused cost
--                           left out on both sides) differ by more than
--                           findings_provider_split_tolerance. value = telemetry's share minus
--                           AWS's; cost_usd = that difference of the pods' split cost, what
--                           following AWS instead would move to or from the team.
-- AWS weighs CPU and memory beside GPUs (assumptions aws_split_weight_*): pods with large CPU or
-- memory requests differ by design, hence a tolerance.
-- payers: the finding is about one team's share of the node, so that team's alone (findings_ranked
-- turns it into paying_teams), not the node's payers.
with telemetry as (
    select strftime(hour_start, '%Y-%m') as month, resource_id,
        coalesce(team, getvariable('unallocated')) as team, dsum(gpu_hours_observed) as busy_h
    from int_gpu_workloads
    where not is_idle and resource_id is not null
    group by all
),

provider as (
    select month, resource_id, team, weight::double as split_cost
    from int_provider_split
    where rule = 'provider_split'
),

shares as (
    select
        coalesce(t.month, p.month) as month,
        coalesce(t.resource_id, p.resource_id) as resource_id,
        coalesce(t.team, p.team) as team,
        coalesce(t.busy_h / sum(t.busy_h) over (partition by t.month, t.resource_id), 0) as telemetry_share,
        coalesce(p.split_cost / sum(p.split_cost) over (partition by p.month, p.resource_id), 0) as provider_share,
        sum(p.split_cost) over (partition by p.month, p.resource_id) as node_split_cost
    from telemetry t
    full join provider p on t.month = p.month and t.resource_id = p.resource_id and t.team = p.team
),

covered as (
    -- only nodes both sides cover: a node missing from one is not a disagreement
    select s.*, max(s.node_split_cost) over (partition by s.month, s.resource_id) as split_cost_usd
    from shares s
    where exists (select 1 from telemetry t where t.month = s.month and t.resource_id = s.resource_id)
        and exists (select 1 from provider p where p.month = s.month and p.resource_id = s.resource_id)
),

param as (
    select value, coefficient_id from int_findings_params where assumption_id = 'findings_provider_split_tolerance'
)

select c.month, 'provider_split_differs' as finding, c.resource_id || ' / ' || c.team as subject, c.resource_id,
    c.team, c.telemetry_share - c.provider_share as value, 'fraction' as unit, null::double as low, null::double as high,
    abs(c.telemetry_share - c.provider_share) * c.split_cost_usd as cost_usd, null::double as energy_kwh,
    printf('%s: telemetry gives %s %.0f%% of the busy GPU-hours, AWS split cost allocation %.0f%% of the pods'' split cost (tolerance %.0f points); the allocation follows telemetry',
           c.resource_id, c.team, 100 * c.telemetry_share, 100 * c.provider_share, 100 * p.value) as detail,
    [p.coefficient_id] as assumption_ids,
    [{'team': c.team, 'weight': 1::double}] as payers
from covered c
cross join param p
where abs(c.telemetry_share - c.provider_share) > p.value
