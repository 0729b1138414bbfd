-- Grain: one row per allocation line (allocation_lines: month x team x meter x rule x source
-- group) x detail: day, resource, namespace, workload, source file and row. The drill-down
-- under team_month, for `meterbook export allocation`. sharing_mode and split_rule: how the
-- GPU-hours behind a telemetry detail were shared (int_gpu_shares; null on billing-row details).
-- Details of a line:
--   charge groups    its billing rows (file sha256, row, day of the charge), by the row's own
--                    amount of the meter; a telemetry_split line also by the team's workloads
--                    on that resource that day (GPU-hours), none that day -> no namespace
--   measured energy  its GPU-hours by day, namespace and pod (telemetry file; no row: an hour
--                    sums many samples), by GPU-hours, util-weighted hours or IT energy
--   estimated energy the resource's billed GPU-hours by day and billing file (no row: an hourly
--                    CUR's hundreds of GPU rows per resource would repeat on each of 18 meters)
-- Each line's amount is split by cumulative rounding in whole quanta of its meter (cfg_meters):
-- the running total up to detail k is floored to the quantum, the last equals the line amount,
-- and a detail takes the difference. So per line, exactly, sum(amount) = allocation_lines.amount
-- (DECIMAL(38, 12)), every detail within one quantum of its proportional part, and the lines of
-- a team add up to team_month to the cent, the watt-hour and the gram. Zero details are left out.
-- The running fractions are computed once per source group (not per line: a group has up to
-- 18 meters and several teams) over narrow rows, files as ranks of their sha256; each line
-- then takes its part by arithmetic alone. This keeps the sort to the billing rows, not the
-- output's several rows per billing row.
with lines as (
    select a.month, a.team, a.meter, a.rule, a.source_group, a.resource_id, a.amount,
        -- money in its currency; every other meter in its own unit (GPU-hours stay h on a USD bill)
        case when a.unit = 'currency' then a.currency else a.unit end as unit, split_part(a.source_group, '|', 1) as kind,
        (1 / (10::hugeint ** m.quantum_places)::hugeint)::decimal(38, 12) as quantum
    from allocation_lines a
    join cfg_meters m on m.meter = a.meter
    where a.amount <> 0
),

-- a file's place in sha256 order: details sort by content, never by load order (a month's
-- lines must not change with what else was loaded)
files as (
    select file_id, sha256, dense_rank() over (order by sha256) as file_rank
    from source_files
),

charge_rows as (
    select c.source_group, c.month, c.resource_id, c.charge_period_start::date as day, f.file_rank,
        c.row_number as source_row, c.charge_line, c.billed_cost::double as billed_cost,
        c.effective_cost::double as effective_cost, c.list_cost::double as list_cost,
        coalesce(c.gpu_hours, 0) as gpu_hours
    from int_charges_teams c
    join files f using (file_id)
),

-- the telemetry file a GPU-hour came from; of several, the first in sha256 order
hour_files as (
    select p.gpu_uuid, p.hour_start, min(f.file_rank) as file_rank
    from gpu_hour_parts p join files f using (file_id)
    group by all
),

workloads as (
    select strftime(w.hour_start, '%Y-%m') as month, w.hour_start::date as day, w.resource_id,
        w.is_idle and coalesce(w.cluster_claim, 'idle') = 'idle' as is_idle, w.cluster_claim is not null as claimed, w.team,
        w.namespace, w.pod, w.sharing_mode, w.split_rule, h.file_rank,
        dsum(w.gpu_hours_observed) as hours, dsum(w.gpu_hours_observed * w.util_mean) as util_hours,
        dsum(w.energy_kwh) as energy_kwh
    from int_gpu_workloads w
    left join hour_files h on h.gpu_uuid = w.gpu_uuid and h.hour_start = w.hour_start
    group by all
),

-- a team's share of a resource's observed GPU-hours on a day, by namespace and pod (totals summed
-- as decimals: a double sum's last digits follow the order rows are read in)
team_day_pods as (
    select month, day, resource_id, coalesce(team, getvariable('unallocated')) as team, namespace, pod, sharing_mode, split_rule,
        hours / sum(hours::decimal(38, 12)) over (partition by month, day, resource_id, coalesce(team, getvariable('unallocated')))::double as frac
    from (select month, day, resource_id, team, namespace, pod, sharing_mode, split_rule, dsum(hours) as hours
          from workloads where not is_idle and split_rule <> 'mig_unallocated' group by all)
    where hours > 0
),

-- Details per source group, with up to four weights (w1..w4; the slot a meter reads is in
-- `shares` below). team_key: null = for every line of the group, a team = for that team's
-- telemetry_split lines only.
details as (
    -- billing rows: billed, effective, list cost, GPU-hours
    select r.source_group, null::varchar as team_key, r.day, r.file_rank, r.source_row, r.charge_line,
        null::varchar as namespace, null::varchar as workload, null::varchar as sharing_mode, null::varchar as split_rule,
        r.billed_cost as w1, r.effective_cost as w2, r.list_cost as w3, r.gpu_hours as w4
    from charge_rows r
    semi join (select source_group from lines where kind = 'charge' and rule <> 'telemetry_split') g using (source_group)
    union all
    -- the same rows, by the team's pods on the resource that day
    select r.source_group, t.team, r.day, r.file_rank, r.source_row, r.charge_line, p.namespace, p.pod, p.sharing_mode, p.split_rule,
        r.billed_cost * coalesce(p.frac, 1), r.effective_cost * coalesce(p.frac, 1),
        r.list_cost * coalesce(p.frac, 1), r.gpu_hours * coalesce(p.frac, 1)
    from charge_rows r
    join (select distinct source_group, team from lines where kind = 'charge' and rule = 'telemetry_split') t
        using (source_group)
    left join team_day_pods p on p.team = t.team and p.month = r.month and p.day = r.day and p.resource_id = r.resource_id
    union all
    -- measured energy: observed GPU-hours, util-weighted hours, IT energy
    select e.source_group, null, w.day, w.file_rank, null::bigint, 0, w.namespace, w.pod, w.sharing_mode, w.split_rule,
        w.hours, w.util_hours, w.energy_kwh, null
    from (select distinct source_group, month, resource_id, is_idle, team
          from int_energy_lines where basis = 'measured' and not list_contains(tiers, 'dcgm_job_stats')) e
    join workloads w on w.month = e.month and w.resource_id is not distinct from e.resource_id
        and w.is_idle = e.is_idle and (w.team is not distinct from e.team or w.claimed)
    union all
    -- estimated energy, and a job's DCGM statistics (no hours): the resource's billed GPU-hours, every meter alike
    select e.source_group, null, r.day, r.file_rank, null::bigint, 0, null, null, null, null,
        r.gpu_hours as w1, r.gpu_hours as w2, r.gpu_hours as w3, null as w4
    from (select distinct source_group, month, resource_id from int_energy_lines
          where basis = 'estimated' or list_contains(tiers, 'dcgm_job_stats')) e
    join (select month, resource_id, day, file_rank, dsum(gpu_hours) as gpu_hours
          from charge_rows where gpu_hours > 0 group by all) r
        on r.month = e.month and r.resource_id = e.resource_id
),

running as (
    select *,
        -- decimal sums (dsum, written out): a double running sum depends on the order the engine
        -- adds in, and a floor below flips a cent between two details when it does
        sum(coalesce(w1, 0)::decimal(38, 12)) over upto_here as cum1,
        sum(coalesce(w2, 0)::decimal(38, 12)) over upto_here as cum2,
        sum(coalesce(w3, 0)::decimal(38, 12)) over upto_here as cum3,
        sum(coalesce(w4, 0)::decimal(38, 12)) over upto_here as cum4,
        sum(coalesce(w1, 0)::decimal(38, 12)) over whole as total1,
        sum(coalesce(w2, 0)::decimal(38, 12)) over whole as total2,
        sum(coalesce(w3, 0)::decimal(38, 12)) over whole as total3,
        sum(coalesce(w4, 0)::decimal(38, 12)) over whole as total4,
        row_number() over upto_here as k,
        count(*) over whole as n
    from details
    window
        upto_here as (partition by source_group, team_key
                      order by day, file_rank, source_row, charge_line, namespace, workload, sharing_mode, split_rule
                      rows between unbounded preceding and current row),
        whole as (partition by source_group, team_key
                  order by day, file_rank, source_row, charge_line, namespace, workload, sharing_mode, split_rule
                  rows between unbounded preceding and unbounded following)
),

-- the share of the group's weight up to and before each detail (no weight at all: even parts)
shares as (
    select source_group, team_key, day, file_rank, source_row, charge_line, namespace, workload, sharing_mode, split_rule,
        k = n as is_last,
        coalesce(cum1 / nullif(total1, 0), k / n) as upto1,
        coalesce((cum1 - coalesce(w1, 0)::decimal(38, 12)) / nullif(total1, 0), (k - 1) / n) as before1,
        coalesce(cum2 / nullif(total2, 0), k / n) as upto2,
        coalesce((cum2 - coalesce(w2, 0)::decimal(38, 12)) / nullif(total2, 0), (k - 1) / n) as before2,
        coalesce(cum3 / nullif(total3, 0), k / n) as upto3,
        coalesce((cum3 - coalesce(w3, 0)::decimal(38, 12)) / nullif(total3, 0), (k - 1) / n) as before3,
        coalesce(cum4 / nullif(total4, 0), k / n) as upto4,
        coalesce((cum4 - coalesce(w4, 0)::decimal(38, 12)) / nullif(total4, 0), (k - 1) / n) as before4
    from running
),

-- every line with its group's details (a line without any keeps its whole amount on one row)
line_details as (
    select l.*, s.day, s.file_rank, s.source_row, s.charge_line, s.namespace, s.workload, s.sharing_mode, s.split_rule,
        coalesce(s.is_last, true) as is_last,
        case when l.kind = 'charge' then
                 case l.meter when 'billed_cost' then 1 when 'effective_cost' then 2 when 'list_cost' then 3 else 4 end
             else case l.meter when 'gpu_hours_observed' then 1 when 'effective_gpu_hours' then 2 else 3 end
        end as slot,
        s.upto1, s.before1, s.upto2, s.before2, s.upto3, s.before3, s.upto4, s.before4
    from lines l
    left join shares s on s.source_group = l.source_group
        and s.team_key is not distinct from case when l.kind = 'charge' and l.rule = 'telemetry_split' then l.team end
),

split as (
    select *,
        case when is_last then amount
             else (floor(amount::double * (case slot when 1 then upto1 when 2 then upto2 when 3 then upto3 else upto4 end)
                         / quantum::double)::hugeint * quantum)::decimal(38, 12) end
        - (floor(amount::double * coalesce(case slot when 1 then before1 when 2 then before2 when 3 then before3 else before4 end, 0)
                 / quantum::double)::hugeint * quantum)::decimal(38, 12) as part
    from line_details
)

select s.month, s.day, s.team, s.resource_id, s.namespace, s.workload, s.rule, s.sharing_mode, s.split_rule, s.meter, s.part::decimal(38, 12) as amount, s.unit,
    f.sha256 as source_sha256, s.source_row, s.charge_line as source_line, s.source_group
from split s
left join (select distinct file_rank, sha256 from files) f using (file_rank)
where s.part <> 0
