-- Grain: month x finding x subject, in the shape of findings_month (which unions it in): what the
-- GPUs' own energy readings say.
--   energy_gap          a CodeCarbon run's GPU energy (its PUE undone) vs DCGM energy of the
--                       busy GPUs of the same model over the run's window, when exactly as many
--                       such GPUs were busy as the run used (otherwise the run is not matchable)
--   energy_above_board  value = kWh a GPU's readings put above TDP x board_power_tolerance in
--                       its hours of the month: cut off, not charged (int_gpu_hours.sql)
--   telemetry_gap       value = unobserved hours of a GPU in the month that a counter gap
--                       spans; energy_kwh = what was spread over them, low/high the range of
--                       the part estimated after a reset inside a gap
--   telemetry_interval  value = GPU-hours of the GPUs read further apart than [telemetry]
--                       interval_s (by more than findings_scrape_interval_tolerance, in most of
--                       their hours with three readings or more): every reading counts
--                       interval_s of observed time, so their observed GPU-hours and coverage
--                       (and the MFU built on them) come out short by the ratio. Readings closer
--                       than interval_s are not a finding: an hour counts no more of them than
--                       they span (int_gpu_hour_readings).
-- payers (energy_above_board, telemetry_gap: findings on one GPU): the teams whose workloads held
-- the GPU's time in the month, each with its GPU-hours, as the node's cost follows them
-- (findings_ranked turns them into paying_teams); null for a GPU no workload held, whose time is
-- the node's idle time and so keeps the node's payers.
with tol as (
    select value as tol, [coefficient_id] as ids from int_findings_params where assumption_id = 'reconciliation_gap_tolerance_fraction'
),

run_overlap as (
    select r.file_id, r.row_number, r.project, r.run_id, r.start_utc, r.end_utc, r.gpu_count,
        r.gpu_energy_kwh / coalesce(nullif(r.pue, 0), 1) as run_kwh,
        count(distinct g.gpu_uuid) as gpus,
        dsum(g.energy_kwh * (1 - w.idle_share)
            * (epoch(least(g.hour_start + interval 1 hour, r.end_utc)) - epoch(greatest(g.hour_start, r.start_utc)))
            / (epoch(g.hour_start + interval 1 hour) - epoch(g.hour_start))) as tel_kwh
    from run_month r
    join int_gpu_hours g on g.hour_start < r.end_utc and g.hour_start + interval 1 hour > r.start_utc
    join ref_gpu_aliases al on al.alias = g.gpu_model_raw and al.gpu_model = r.gpu_model
    join (select gpu_uuid, hour_start, coalesce(sum(share::decimal(38, 12)) filter (where is_idle), 0)::double as idle_share
          from int_gpu_workloads group by all) w using (gpu_uuid, hour_start)
    where r.start_utc is not null and r.gpu_energy_kwh > 0 and w.idle_share < 1
    group by all
),

interval_tol as (
    select value as ratio, [coefficient_id] as ids from int_findings_params where assumption_id = 'findings_scrape_interval_tolerance'
),

gpu_spacing as (
    -- a GPU's hours read further apart than interval_s; a gap inside an hour moves that hour's
    -- spacing, not most of the month's
    select strftime(h.hour_start, '%Y-%m') as month, h.gpu_uuid, count(*) as hours,
        count(*) filter (where h.spacing_s > getvariable('interval_s') * t.ratio) as off_hours,
        davg(h.spacing_s) as spacing_s
    from (select gpu_uuid, hour_start, (epoch(max(last_ts)) - epoch(min(first_ts))) / (sum(n_scrapes) - 1) as spacing_s
          from gpu_hour_parts group by gpu_uuid, hour_start having sum(n_scrapes) >= 3) h
    cross join interval_tol t
    group by all
),

interval_month as (
    select month, count(*) as gpus, count(*) filter (where off_hours * 2 > hours) as off_gpus,
        sum(hours) filter (where off_hours * 2 > hours) as off_gpu_hours,
        davg(case when off_hours * 2 > hours then spacing_s end) as spacing_s
    from gpu_spacing
    group by all
),

gpu_month as (
    select strftime(g.hour_start, '%Y-%m') as month, coalesce(g.host, 'no host label') || '/' || g.gpu_uuid as subject,
        pick(w.resource_id) as resource_id,
        dsum(g.excess_kwh) as excess_kwh,
        count(*) filter (where g.excess_kwh > 0) as excess_hours,
        dsum(g.gap_kwh) as gap_kwh,
        sum((g.energy_kwh - g.energy_kwh_low)::decimal(38, 12)) filter (where g.gap_kwh > 0)::double as gap_below_kwh,
        sum((g.energy_kwh_high - g.energy_kwh)::decimal(38, 12)) filter (where g.gap_kwh > 0)::double as gap_above_kwh,
        dsum(least(g.estimated_kwh, g.gap_kwh)) as gap_estimated_kwh,
        sum((g.energy_coverage - g.coverage)::decimal(38, 12)) filter (where g.gap_kwh > 0)::double as gap_h,
        max(g.gap_s) filter (where g.gap_kwh > 0) as longest_gap_s
    from int_gpu_hours g
    left join (select distinct gpu_uuid, hour_start, resource_id from int_gpu_workloads) w using (gpu_uuid, hour_start)
    group by all
),

gpu_payers as (
    select month, subject, list({'team': team, 'weight': hours} order by hours desc, team asc) as payers
    from (select strftime(hour_start, '%Y-%m') as month, coalesce(host, 'no host label') || '/' || gpu_uuid as subject,
              coalesce(team, getvariable('unallocated')) as team, dsum(gpu_hours_observed) as hours
          from int_gpu_workloads
          where not is_idle
          group by all)
    where hours > 0
    group by all
)

select strftime(o.end_utc, '%Y-%m') as month, 'energy_gap' as finding,
    coalesce(o.project, '') || '/' || coalesce(o.run_id, o.row_number::varchar) as subject, null::varchar as resource_id,
    null::varchar as team, o.tel_kwh - o.run_kwh as value, 'kWh' as unit, null::double as low, null::double as high,
    null::double as cost_usd, null::double as energy_kwh,
    printf('CodeCarbon %.3f kWh GPU energy (PUE removed), DCGM %.3f kWh on %d busy GPUs over the run', o.run_kwh, o.tel_kwh, o.gpus) as detail,
    tol.ids as assumption_ids, null as payers
from run_overlap o cross join tol
where o.gpus = o.gpu_count and abs(o.tel_kwh - o.run_kwh) > tol.tol * greatest(o.tel_kwh, o.run_kwh)
union all
select g.month, 'energy_above_board', g.subject, g.resource_id, null, g.excess_kwh, 'kWh', null, null, null, g.excess_kwh,  -- noqa: AL08
    printf('%d GPU-hours read more than the board can draw (TDP x tolerance): %.3f kWh not charged; check the counter and the labels that name this GPU',
           g.excess_hours, g.excess_kwh),
    ['assumptions:board_power_tolerance'], p.payers
from gpu_month g left join gpu_payers p using (month, subject) where g.excess_kwh > 0
union all
select g.month, 'telemetry_gap', g.subject, g.resource_id, null, g.gap_h, 'h', null, null, null, g.gap_kwh,
    printf('%.3f kWh of counter energy spread over %.1f unobserved hours (longest gap %.1f h)%s', g.gap_kwh, g.gap_h,
           g.longest_gap_s / 3600, case when g.gap_estimated_kwh > 0
           then printf('; %.3f kWh estimated after a counter reset inside a gap (range -%.3f/+%.3f kWh)',
                       g.gap_estimated_kwh, g.gap_below_kwh, g.gap_above_kwh) else '' end),
    []::varchar[], p.payers
from gpu_month g left join gpu_payers p using (month, subject) where g.gap_kwh > 0
union all
select m.month, 'telemetry_interval', 'telemetry interval', null, null, m.off_gpu_hours, 'h', null, null, null, null,
    printf('%d of %d GPUs were read about every %.0f s, not every %.0f s as configured: their observed GPU-hours and coverage, and the MFU built on them, count %.0f s a reading',
           m.off_gpus, m.gpus, m.spacing_s, getvariable('interval_s')::double, getvariable('interval_s')::double),
    t.ids, null
from interval_month m cross join interval_tol t
where m.off_gpus > 0
