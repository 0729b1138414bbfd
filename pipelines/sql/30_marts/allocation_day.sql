-- Grain: one row per allocation line (allocation_lines: month x team x meter x rule x source
-- group) x detail: day, resource, namespace, workload, source file and row. The drill-down
-- under team_month, for `meterbook export allocation`. sharing_mode and split_rule: how the
-- GPU-hours behind a telemetry detail were shared (int_gpu_shares; null on billing-row details).
-- Details of a line (int_alloc_day_details): its billing rows (file sha256, row, day of the
-- charge; a telemetry_split line also by the team's workloads on that resource that day),
-- measured energy's GPU-hours by day, namespace and pod (telemetry file; no row: an hour sums
-- many samples), estimated energy's billed GPU-hours by day and billing file (no row: an hourly
-- CUR's hundreds of GPU rows per resource would repeat on each of 18 meters).
-- Each line's amount is split by cumulative rounding in whole quanta of its meter (cfg_meters):
-- the running total up to detail k is floored to the quantum, the last equals the line amount,
-- and a detail takes the difference. So per line, exactly, sum(amount) = allocation_lines.amount
-- (DECIMAL(38, 12)), every detail within one quantum of its proportional part, and the lines of
-- a team add up to team_month to the cent, the watt-hour and the gram. Zero details are left out.
-- The running fractions are computed once per source group (int_alloc_day_shares), files as
-- ranks of their sha256 (int_file_ranks); each line then takes its part by arithmetic alone.
-- This keeps the sort to the billing rows, not the output's several rows per billing row.

-- every line with its group's details (a line without any keeps its whole amount on one row)
with line_details as (
    select l.*, s.day, s.file_rank, s.source_row, s.charge_line, s.namespace, s.workload, s.sharing_mode, s.split_rule,
        coalesce(s.is_last, true) as is_last,
        case when l.kind = 'charge' then
                 case l.meter when 'billed_cost' then 1 when 'effective_cost' then 2 when 'list_cost' then 3 else 4 end
             else case l.meter when 'gpu_hours_observed' then 1 when 'effective_gpu_hours' then 2 else 3 end
        end as slot,
        s.upto1, s.before1, s.upto2, s.before2, s.upto3, s.before3, s.upto4, s.before4
    from int_alloc_day_lines l
    left join int_alloc_day_shares s on s.source_group = l.source_group
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
left join (select distinct file_rank, sha256 from int_file_ranks) f using (file_rank)
where s.part <> 0
