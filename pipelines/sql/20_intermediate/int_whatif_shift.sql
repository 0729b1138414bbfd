-- Grain: month x zone x job x hour of the job. The what-if replay's shift lever: a deferrable
-- job ([whatif] deferrable_namespaces, or deferrable_jobs by pod) keeps every hour of its
-- energy but runs them in the cleanest hours of its window: from its first hour to its last
-- hour plus shift_window_h ([whatif], else assumptions:whatif_shift_window_h), inside the month.
-- The job's hours, largest energy first, take the window's hours, lowest intensity first (the
-- pairing that minimises the sum of energy x intensity): each from_hour goes to one distinct
-- to_hour, and the energy of each hour travels whole. A job may be checkpointed and resumed
-- (its hours need not stay contiguous); capacity in the new hours is assumed free.
-- Intensity: the zone's hourly series where it has the hour, else its annual factor; ties go to
-- the job's own hours first, so without hourly data a job stays within its own hours.
with window_h as (
    select coalesce((select value from cfg_whatif where param = 'shift_window_h'), value) as h
    from ref_assumptions where assumption_id = 'whatif_shift_window_h'
),

jobs as (
    select month, zone, namespace, coalesce(pod, '') as pod, mode_det(list(team)) as team, hour_start,
        dsum(energy_kwh) as energy_kwh, dsum(facility_energy_kwh) as facility_energy_kwh,
        dsum(co2e_kg) as co2e_kg, dsum(co2e_kg_low) as co2e_kg_low, dsum(co2e_kg_high) as co2e_kg_high
    from int_gpu_hour_carbon
    where not is_idle and zone is not null and energy_kwh > 0
        and (namespace in (select name from cfg_deferrable where kind = 'namespace')
             or pod in (select name from cfg_deferrable where kind = 'job'))
    group by month, zone, namespace, coalesce(pod, ''), hour_start
),

spans as (
    select month, zone, namespace, pod, min(hour_start) as first_hour,
        least(max(hour_start) + to_hours((select h from window_h)::bigint),
              strptime(month, '%Y-%m') + interval 1 month - interval 1 hour) as window_end
    from jobs
    group by month, zone, namespace, pod
),

slots as (
    select s.*, t.slot,
        coalesce(g.intensity_g_per_kwh, z.intensity_g_per_kwh) as g_per_kwh,
        coalesce(g.intensity_g_per_kwh, z.intensity_g_per_kwh_low) as g_per_kwh_low,
        coalesce(g.intensity_g_per_kwh, z.intensity_g_per_kwh_high) as g_per_kwh_high,
        z.pue, z.pue_low, z.pue_high
    from spans s
    cross join unnest(generate_series(s.first_hour, s.window_end, interval 1 hour)) t (slot)
    left join int_grid_hours g on g.zone = s.zone and g.hour_start = t.slot
    left join int_zone_factors z on z.zone = s.zone
),

ranked_slots as (
    select sl.*,
        row_number() over (partition by sl.month, sl.zone, sl.namespace, sl.pod
                           order by sl.g_per_kwh, (j.hour_start is null), sl.slot) as rank
    from slots sl
    left join jobs j on j.month = sl.month and j.zone = sl.zone and j.namespace = sl.namespace and j.pod = sl.pod
        and j.hour_start = sl.slot
),

ranked_hours as (
    select *, row_number() over (partition by month, zone, namespace, pod order by facility_energy_kwh desc, hour_start asc) as rank
    from jobs
)

select
    h.month, h.zone, h.namespace, h.pod, h.team, s.first_hour, s.window_end,
    h.hour_start as from_hour, s.slot as to_hour,
    h.energy_kwh, h.facility_energy_kwh,
    h.co2e_kg as co2e_kg_before, h.co2e_kg_low as co2e_kg_before_low, h.co2e_kg_high as co2e_kg_before_high,
    h.energy_kwh * s.pue * s.g_per_kwh / getvariable('g_per_kg') as co2e_kg_after,
    h.energy_kwh * s.pue_low * s.g_per_kwh_low / getvariable('g_per_kg') as co2e_kg_after_low,
    h.energy_kwh * s.pue_high * s.g_per_kwh_high / getvariable('g_per_kg') as co2e_kg_after_high
from ranked_hours h
join ranked_slots s on s.month = h.month and s.zone = h.zone and s.namespace = h.namespace and s.pod = h.pod
    and s.rank = h.rank
