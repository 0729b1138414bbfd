-- Grain: GPU x hour with parts x month whose build reads it. A GPU-hour is read by its own month
-- and, near a month boundary, by the months on the other side: int_gpu_hours takes a GPU's first
-- hour of a month from its last counter reading before it, averages power over the six hours on
-- each side of a reading, and spreads a counter gap over every hour it spans (months with no
-- reading of the GPU included). Where a GPU's series passes from one month to a later one,
-- every month from the first to the second reads the hours from six before the last counter
-- reading before the passage to six after the first counter reading after it; any other hour
-- is read by its own month alone, so a late file that changes no such hour leaves the
-- neighbouring months unread.
with hours as (
    select gpu_uuid, hour_start, bool_or(n_energy > 0) as has_energy
    from gpu_hour_parts
    group by gpu_uuid, hour_start
),

numbered as (
    select
        *,
        strftime(hour_start, '%Y-%m') as month,
        row_number() over (partition by gpu_uuid order by hour_start) as rn
    from hours
),

marked as (
    select
        *,
        max(case when has_energy then rn end) over (
            partition by gpu_uuid order by rn rows between unbounded preceding and current row
        ) as energy_rn_before,
        min(case when has_energy then rn end) over (
            partition by gpu_uuid order by rn rows between 1 following and unbounded following
        ) as energy_rn_after,
        lead(month) over (partition by gpu_uuid order by rn) as next_month
    from numbered
),

crossings as (
    select
        gpu_uuid,
        month as from_month,
        next_month as to_month,
        least(coalesce(energy_rn_before, rn), rn) - 6 as lo_rn,
        coalesce(energy_rn_after, rn + 1) + 6 as hi_rn
    from marked
    where next_month is not null and next_month <> month
),

boundary as (
    select n.gpu_uuid, n.hour_start, strftime(m.month_start, '%Y-%m') as month
    from crossings c
    join numbered n on n.gpu_uuid = c.gpu_uuid and n.rn between c.lo_rn and c.hi_rn,
        unnest(generate_series(strptime(c.from_month, '%Y-%m'), strptime(c.to_month, '%Y-%m'),
                               interval 1 month)) m (month_start)
)

select gpu_uuid, hour_start, month from numbered
union
select gpu_uuid, hour_start, month from boundary
