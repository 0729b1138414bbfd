-- The readings of a telemetry file that fail a plausibility check (run only when a series'
-- groups leave its limits, stg_telemetry__limits; only those series are read), by what tells a
-- sample (series, time, value: the one pass's samples carry no row number), with the check's
-- name. A reading above its ceiling fails; an energy counter only falls when the driver
-- reloads and restarts it from zero, so a fall is a reset when the new reading is no more than
-- the board could draw since the reading before, and any other reading below one already seen
-- since the last reset fails. Samples alike in series, time and value share one verdict.
-- Input: _tel_samples(series, value_text, ts_ms, ...), _tel_bounds.
-- {{ ts_min_ms }} / {{ ts_max_ms }}: as in stg_telemetry__groups. {{ carried }}: `, filename`
-- for a batch of files staged as one (each file's series apart), or nothing.
with exceeded as (
    select * from _tel_bounds where exceeded
),

parsed as (
    select
        series,
        value_text,
        ts_ms{{ carried }},
        split_part(series, '{', 1) as metric,
        case when strpos(series, '{') > 0 then substr(series, strpos(series, '{') + 1) else '' end as labels,
        try_cast(value_text as double) as v
    from _tel_samples
    where split_part(series, '{', 1) in (select metric from exceeded)
        -- the groups' test of a good reading, but for its limits
        and try_cast(value_text as double) >= 0 and try_cast(value_text as double) < dcgm_blank_min()
        and ts_ms between {{ ts_min_ms }} and {{ ts_max_ms }}
        and not dcgm_int32_blank(try_cast(value_text as double))
),

bounded as (
    select
        p.series,
        p.value_text,
        p.ts_ms{{ carried }},
        p.v,
        b.check_name,
        b.high_v,
        b.reset_v_per_ms,
        b.limit_text
    from parsed p
    inner join exceeded b using (metric, labels{{ carried }})
),

counters as (
    select
        *,
        coalesce(v < lag(v) over w and v <= reset_v_per_ms * (ts_ms - lag(ts_ms) over w), false) as reset
    from bounded
    where reset_v_per_ms is not null
    window w as (partition by series{{ carried }} order by ts_ms, v)
),

segments as (
    select
        *,
        sum(reset::int) over (partition by series{{ carried }} order by ts_ms, v rows between unbounded preceding and current row) as segment
    from counters
),

fallen as (
    select
        *,
        v < max(v) over (partition by series{{ carried }}, segment order by ts_ms, v
                         rows between unbounded preceding and 1 preceding) as fell
    from segments
)

select series, ts_ms, value_text{{ carried }}, max(check_name) as implausible, max(limit_text) as limit_text
from (
    select series, ts_ms, value_text{{ carried }}, check_name, limit_text from bounded where v > high_v
    union all
    select series, ts_ms, value_text{{ carried }}, check_name, limit_text from fallen where fell
)
group by series, ts_ms, value_text{{ carried }}
