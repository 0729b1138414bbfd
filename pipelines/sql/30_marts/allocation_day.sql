-- Grain: one row per allocation line (allocation_lines: month x team x meter x rule x source
-- group) x detail: day, resource, namespace, workload, source file and row. The drill-down
-- under team_month, for `meterbook export allocation`.
-- Details of a line:
--   charge groups   its billing rows (file sha256, row, day of the charge), by the row's own
--                   amount of the meter; a telemetry_split line also by the team's workloads
--                   on that resource that day (GPU-hours), none that day -> no namespace
--   measured energy its GPU-hours by day, namespace and pod (telemetry file; no row: an hour
--                   sums many samples), by GPU-hours, util-weighted hours or IT energy
--   estimated energy the resource's billed GPU rows, by their GPU-hours
-- Each line's amount is split by cumulative rounding in whole quanta of its meter (cfg_meters):
-- the running total up to detail k is floored to the quantum, the last equals the line amount,
-- and a detail takes the difference. So per line, exactly, sum(amount) = allocation_lines.amount
-- (DECIMAL(38, 12)), every detail within one quantum of its proportional part, and the lines of
-- a team add up to team_month to the cent, the watt-hour and the gram. Zero details are left out.
with lines as (
    select a.month, a.team, a.meter, a.rule, a.source_group, a.resource_id, a.amount,
        coalesce(a.currency, a.unit) as unit, split_part(a.source_group, '|', 1) as kind,
        (1 / (10::hugeint ** m.quantum_places)::hugeint)::decimal(38, 12) as quantum
    from allocation_lines a
    join cfg_meters m on m.meter = a.meter
    where a.amount <> 0
),

charge_rows as (
    select c.source_group, c.month, c.resource_id, c.charge_period_start::date as day, f.sha256, c.row_number,
        c.charge_line, c.billed_cost::double as billed_cost, c.effective_cost::double as effective_cost,
        c.list_cost::double as list_cost, coalesce(c.gpu_hours, 0) as gpu_hours
    from int_charges_teams c
    join source_files f using (file_id)
),

-- the telemetry file a GPU-hour came from; of several, the least sha256 (by content, not by
-- load order: a month's lines must not change with what else was loaded)
hour_files as (
    select p.gpu_uuid, p.hour_start, min(f.sha256) as sha256
    from gpu_hour_parts p join source_files f using (file_id)
    group by all
),

workloads as (
    select strftime(w.hour_start, '%Y-%m') as month, w.hour_start::date as day, w.resource_id, w.is_idle, w.team,
        w.namespace, w.pod, h.sha256,
        dsum(w.gpu_hours_observed) as hours,
        dsum(w.gpu_hours_observed * w.util_mean) as util_hours,
        dsum(w.energy_kwh) as energy_kwh
    from int_gpu_workloads w
    left join hour_files h on h.gpu_uuid = w.gpu_uuid and h.hour_start = w.hour_start
    group by all
),

-- a team's share of a resource's observed GPU-hours on a day, by namespace and pod
team_day_pods as (
    select month, day, resource_id, coalesce(team, getvariable('unallocated')) as team, namespace, pod,
        hours / sum(hours) over (partition by month, day, resource_id, coalesce(team, getvariable('unallocated'))) as frac
    from (select month, day, resource_id, team, namespace, pod, dsum(hours) as hours
          from workloads where not is_idle group by all)
    where hours > 0
),

charge_details as (
    select l.*, r.day, r.sha256, r.row_number as source_row, r.charge_line, p.namespace, p.pod as workload,
        case l.meter when 'billed_cost' then r.billed_cost when 'effective_cost' then r.effective_cost
                     when 'list_cost' then r.list_cost else r.gpu_hours end * coalesce(p.frac, 1) as w
    from lines l
    join charge_rows r on r.source_group = l.source_group
    left join team_day_pods p on l.rule = 'telemetry_split' and p.team = l.team and p.month = r.month
        and p.day = r.day and p.resource_id = r.resource_id
    where l.kind = 'charge'
),

energy_details as (
    select l.*, w.day, w.sha256, null::bigint as source_row, 0 as charge_line, w.namespace, w.pod as workload,
        case l.meter when 'gpu_hours_observed' then w.hours when 'effective_gpu_hours' then w.util_hours
                     else w.energy_kwh end as w
    from lines l
    join int_energy_lines e on e.source_group = l.source_group and e.basis = 'measured'
    join workloads w on w.month = e.month and w.resource_id is not distinct from e.resource_id
        and w.is_idle = e.is_idle and w.team is not distinct from e.team
    where l.kind = 'energy'
    union all
    select l.*, r.day, r.sha256, r.row_number, r.charge_line, null, null, r.gpu_hours
    from lines l
    join int_energy_lines e on e.source_group = l.source_group and e.basis = 'estimated'
    join charge_rows r on r.month = e.month and r.resource_id = e.resource_id and r.gpu_hours > 0
    where l.kind = 'energy'
),

found as (
    select * from charge_details
    union all by name
    select * from energy_details
),

-- a line with no detail to go by (none expected; kept whole, so no amount is ever lost)
details as (
    select * from found
    union all by name
    select l.*, 1.0 as w
    from lines l
    anti join (select distinct source_group, team, rule, meter from found) f using (source_group, team, rule, meter)
),

running as (
    select * replace (coalesce(w, 0) as w),
        -- decimal sums (dsum, written out): a double running sum depends on the order the engine
        -- adds in, and a floor below flips a cent between two details when it does
        sum(coalesce(w, 0)::decimal(38, 12)) over (partition by source_group, team, rule, meter
                                                   order by day, sha256, source_row, charge_line, namespace, workload
                                                   rows unbounded preceding) as cum_w,
        sum(coalesce(w, 0)::decimal(38, 12)) over (partition by source_group, team, rule, meter) as total_w,
        row_number() over (partition by source_group, team, rule, meter order by day, sha256, source_row, charge_line, namespace, workload) as k,
        count(*) over (partition by source_group, team, rule, meter) as n
    from details
),

cumulated as (
    select *,
        case when k = n then amount
             -- no weight to go by (all zero): even parts
             else (floor(amount::double * coalesce(cum_w / nullif(total_w, 0), k / n) / quantum::double)::hugeint
                   * quantum)::decimal(38, 12) end as upto
    from running
),

split as (
    select *, (upto - coalesce(lag(upto) over (partition by source_group, team, rule, meter order by k), 0))::decimal(38, 12) as part
    from cumulated
)

select month, day, team, resource_id, namespace, workload, rule, meter, part as amount, unit,
    sha256 as source_sha256, source_row, charge_line as source_line, source_group
from split
where part <> 0
