-- Grain: month x finding x subject, as findings_month, less what is no finding at all: a purchase
-- that pays back later than the hardware lasts (assumptions: hardware_lifetime_years), or never.
-- Adds, per finding:
--   paying_team   the team charged the most for what the finding is about, not the tag on its
--                 charges; paying_teams lists every team charged for it with its share, largest
--                 first. A finding on a whole resource (an idle node, a Spot candidate): the
--                 teams allocation_lines charges its effective cost to. A finding on part of one
--                 (a GPU, a MIG slice's or a time-sliced GPU's pods, one team's share of a node):
--                 the teams charged for that part's time (findings_month.payers), so that the
--                 chargeback and the team statements name the same payers. Findings tied to no
--                 resource keep findings_month's team.
--   section       'decision' (money to act on) or 'data_quality' (the bill and telemetry to
--                 match: hosts, gaps, unobserved resources; instruments to correct), listed apart
--   material      the money at stake reaches findings_material_min_cost_usd ([findings] in
--                 meterbook.toml, else assumptions.csv); an invoice difference always is
--   overlapped_by for an action that a larger one on the same resource covers (Spot, a
--                 commitment, owned GPUs, idle time, a low-utilization GPU all save on the same
--                 spend): that one's finding and subject; it is not added to the savings
--   saving_usd    cost_usd where acting on it saves money and nothing overlaps it, else 0:
--                 the month's savings are their sum
--   currency      the billing currency of the money at stake (cost_usd, saving_usd): its
--                 resource's, an invoice's own, else the team's only one, else the reporting one
--   cost_reporting, saving_reporting  the same in the month's reporting currency, at the bill's
--                 own rate (int_fx_bill_rates); materiality, overlaps and rank compare these
--   action_key    the labels.csv finding key whose action the reports print: the finding, but
--                 idle_owned_capacity for an owned cluster's idle time (its capital is spent:
--                 scaling down saves nothing, more work on it does)
--   rank          1 = first to read: invoice differences, then material decisions by money at
--                 stake, then the rest by money at stake
with a as (
    select assumption_id, value, coefficient_id from ref_assumptions
),

param as (
    select a.assumption_id, coalesce(f.value, a.value) as value
    from a left join cfg_findings f on 'findings_' || f.param = a.assumption_id
),

thr as (
    select
        (select value from param where assumption_id = 'findings_material_min_cost_usd') as material_usd,
        (select value from param where assumption_id = 'hardware_lifetime_years') * getvariable('months_per_year') as life_months
),

charged as (
    select month, resource_id, team, sum(amount) as cost
    from allocation_lines
    where meter = 'effective_cost' and resource_id is not null
    group by all
    having sum(amount) <> 0
),

-- a part of a resource's weights by team (GPU-hours), keyed by the finding; decimals as above
part_charged as (
    -- team named outright: Spark would call the field p.team
    select f.month, f.finding, f.subject, u.p.team as team, sum(u.p.weight::decimal(38, 12)) as cost  -- noqa: AL09
    from findings_month f
    cross join unnest(f.payers) u (p)
    group by all
    having sum(u.p.weight::decimal(38, 12)) > 0
),

-- The total summed as decimals, exact in any order: a sum of doubles over the window moved the
-- shares' last digits when another month's rows changed the order it was read in. One form for
-- both grains: a whole resource's (finding and subject null) and a finding's part of one.
payers as (
    select month, resource_id, finding, subject,
        list({'team': team, 'share': cost::double / total::double} order by cost desc, team asc) as paying_teams
    from (select *, sum(cost) over (partition by month, resource_id, finding, subject) as total
          from (select month, resource_id, null::varchar as finding, null::varchar as subject, team, cost from charged
                union all
                select month, null, finding, subject, team, cost from part_charged))
    group by month, resource_id, finding, subject
),

owned as (
    -- the resources of owned clusters' cost pools
    select distinct resource_id from int_charges_teams where provider = 'owned' and resource_id is not null
),

kept as (
    select f.*, coalesce(r.currency, case when f.finding = 'invoice_difference' then f.unit end, t.currency,
                         m.reporting_currency) as currency,
        m.reporting_currency,
        case when f.finding = 'idle_gpu_hours' and f.resource_id in (select o.resource_id from owned o)
             then 'idle_owned_capacity' else f.finding end as action_key
    from findings_month f
    cross join thr
    left join int_fx_owners r on r.month = f.month and r.owner_kind = 'resource' and r.owner = f.resource_id
    left join int_fx_owners t on t.month = f.month and t.owner_kind = 'team' and t.owner = f.team
    left join int_fx_owners m on m.month = f.month and m.owner_kind = 'month' and m.owner = f.month
    where not (f.finding = 'owned_break_even' and (f.value is null or f.value > thr.life_months))
),

converted as (
    select k.*, (k.cost_usd * x.rate::double) as cost_reporting
    from kept k
    left join int_fx_bill_rates x on x.month = k.month and x.currency = k.currency
),

labelled as (
    select k.*,
        coalesce(q.paying_teams[1].team, p.paying_teams[1].team, k.team) as paying_team,
        coalesce(q.paying_teams, p.paying_teams, []) as paying_teams,
        case when k.finding in ('gpu_hours_gap', 'unmatched_host', 'unobserved_resource', 'energy_gap',
                                'energy_above_board', 'telemetry_gap', 'telemetry_interval', 'instrument_overclaimed', 'instrument_unmatched',
                                'instrument_duplicate', 'market_factor_missing', 'supplier_factor_unmatched')
             then 'data_quality' else 'decision' end as section,
        k.finding = 'invoice_difference' or coalesce(abs(k.cost_reporting), 0) >= thr.material_usd as material,
        thr.material_usd as materiality_usd
    from converted k
    cross join thr
    left join payers p on p.month = k.month and p.resource_id = k.resource_id and p.finding is null
    left join payers q on q.month = k.month and q.finding = k.finding and q.subject = k.subject
),

-- Actions on one resource (Spot, a commitment, owned GPUs, idle time, a low-utilization GPU)
-- save on the same spend: only the largest is counted; the others name it in overlapped_by.
acted as (
    select *,
        case when on_resource then first_value(finding) over same_spend end as largest_finding,
        case when on_resource then first_value(subject) over same_spend end as largest_subject,
        case when on_resource then row_number() over same_spend end as size_rank
    from (select *, section = 'decision' and resource_id is not null and finding <> 'invoice_difference' as on_resource
          from labelled)
    window same_spend as (partition by month, resource_id, on_resource
                          order by abs(coalesce(cost_reporting, 0)) desc, finding asc, subject asc)
)

-- payers is findings_month's raw weights, paying_teams what they come to
select * exclude (on_resource, largest_finding, largest_subject, size_rank, payers),
    case when size_rank > 1 then largest_finding || ' ' || largest_subject end as overlapped_by,
    -- what acting on it saves, counted once: decisions, less what a larger action on the resource covers
    case when section = 'decision' and finding <> 'invoice_difference' and coalesce(size_rank, 1) = 1
         then coalesce(cost_usd, 0) else 0 end as saving_usd,
    case when section = 'decision' and finding <> 'invoice_difference' and coalesce(size_rank, 1) = 1
         then coalesce(cost_reporting, 0) else 0 end as saving_reporting,
    row_number() over (partition by month
        order by finding <> 'invoice_difference' asc, section <> 'decision' asc, not material asc,
                 abs(coalesce(cost_reporting, 0)) desc, finding asc, subject asc) as rank
from acted
