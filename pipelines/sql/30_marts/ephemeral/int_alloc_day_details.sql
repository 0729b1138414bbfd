-- Grain: source group x team_key x detail (day, file, row, line, namespace, workload, sharing).
-- The details an allocation line of the group splits over, with up to four weights (w1..w4;
-- the slot a meter reads is in allocation_day). team_key: null = for every line of the group, a
-- team = for that team's telemetry_split lines only. Details of a group:
--   charge groups    its billing rows, by the row's own amount of the meter; a telemetry_split
--                    line also by the team's pods on that resource that day (GPU-hours)
--   measured energy  its GPU-hours by day, namespace and pod (telemetry file; no row)
--   estimated energy the resource's billed GPU-hours by day and billing file (no row)
-- Ephemeral: inlined into its readers.
with team_day_pods as (
    -- a team's share of a resource's observed GPU-hours on a day, by namespace and pod (totals
    -- summed as decimals: a double sum's last digits follow the order rows are read in)
    select month, day, resource_id, coalesce(team, getvariable('unallocated')) as team, namespace, pod, sharing_mode, split_rule,
        hours / sum(hours::decimal(38, 12)) over (partition by month, day, resource_id, coalesce(team, getvariable('unallocated')))::double as frac
    from (select month, day, resource_id, team, namespace, pod, sharing_mode, split_rule, dsum(hours) as hours
          from int_alloc_day_workloads where not is_idle and split_rule <> 'mig_unallocated' group by all)
    where hours > 0
)

-- billing rows: billed, effective, list cost, GPU-hours
select r.source_group, null::varchar as team_key, r.day, r.file_rank, r.source_row, r.charge_line,
    null::varchar as namespace, null::varchar as workload, null::varchar as sharing_mode, null::varchar as split_rule,
    r.billed_cost as w1, r.effective_cost as w2, r.list_cost as w3, r.gpu_hours as w4
from int_alloc_day_charge_rows r
semi join (select source_group from int_alloc_day_lines where kind = 'charge' and rule <> 'telemetry_split') g using (source_group)
union all
-- the same rows, by the team's pods on the resource that day (none that day: no namespace)
select r.source_group, t.team, r.day, r.file_rank, r.source_row, r.charge_line, p.namespace, p.pod, p.sharing_mode, p.split_rule,
    r.billed_cost * coalesce(p.frac, 1), r.effective_cost * coalesce(p.frac, 1),
    r.list_cost * coalesce(p.frac, 1), r.gpu_hours * coalesce(p.frac, 1)
from int_alloc_day_charge_rows r
join (select distinct source_group, team from int_alloc_day_lines where kind = 'charge' and rule = 'telemetry_split') t
    using (source_group)
left join team_day_pods p on p.team = t.team and p.month = r.month and p.day = r.day and p.resource_id = r.resource_id
union all
-- measured energy: observed GPU-hours, util-weighted hours, IT energy
select e.source_group, null, w.day, w.file_rank, null::bigint, 0, w.namespace, w.pod, w.sharing_mode, w.split_rule,
    w.hours, w.util_hours, w.energy_kwh, null
from (select distinct source_group, month, resource_id, is_idle, team
      from int_energy_lines where basis = 'measured' and not list_contains(tiers, 'dcgm_job_stats')) e
join int_alloc_day_workloads w on w.month = e.month and w.resource_id is not distinct from e.resource_id
    and w.is_idle = e.is_idle and (w.team is not distinct from e.team or w.claimed)
union all
-- estimated energy, and a job's DCGM statistics (no hours): the resource's billed GPU-hours, every meter alike
select e.source_group, null, r.day, r.file_rank, null::bigint, 0, null, null, null, null,
    r.gpu_hours as w1, r.gpu_hours as w2, r.gpu_hours as w3, null as w4
from (select distinct source_group, month, resource_id from int_energy_lines
      where basis = 'estimated' or list_contains(tiers, 'dcgm_job_stats')) e
join (select month, resource_id, day, file_rank, dsum(gpu_hours) as gpu_hours
      from int_alloc_day_charge_rows where gpu_hours > 0 group by all) r
    on r.month = e.month and r.resource_id = e.resource_id
