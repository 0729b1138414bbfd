-- A telemetry file's samples with the plausibility check each reading fails (run only when a
-- series' groups leave its limits, stg_telemetry__limits): `implausible` is the check's name,
-- null for a reading within them or one another test rejects. A reading above its ceiling
-- fails; an energy counter only falls when the driver reloads and restarts it from zero, so a
-- fall is a reset when the new reading is no more than the board could draw since the reading
-- before, and any other reading below one already seen since the last reset fails.
-- Input: _tel_samples_numbered(row_number, series, value_text, ts_ms, line), _tel_bounds.
-- {{ ts_min_ms }} / {{ ts_max_ms }}: as in stg_telemetry__groups.
with parsed as (
    select
        *,
        split_part(series, '{', 1) as metric,
        case when strpos(series, '{') > 0 then substr(series, strpos(series, '{') + 1) else '' end as labels,
        -- the groups' test of a good reading, but for its limits
        coalesce(try_cast(value_text as double) >= 0 and try_cast(value_text as double) < dcgm_blank_min()
                 and ts_ms between {{ ts_min_ms }} and {{ ts_max_ms }}
                 and not dcgm_int32_blank(try_cast(value_text as double)), false) as valid,
        try_cast(value_text as double) as v
    from _tel_samples_numbered
),

bounded as (
    select
        p.*,
        b.check_name,
        b.high_v,
        b.reset_v_per_ms,
        b.limit_text
    from parsed p
    left join _tel_bounds b on b.metric = p.metric and b.labels = p.labels
),

counters as (
    select
        row_number,
        series,
        ts_ms,
        v,
        coalesce(v < lag(v) over w and v <= reset_v_per_ms * (ts_ms - lag(ts_ms) over w), false) as reset
    from bounded
    where valid and reset_v_per_ms is not null
    window w as (partition by series order by ts_ms, row_number)
),

segments as (
    select
        *,
        sum(reset::int) over (partition by series order by ts_ms, row_number rows between unbounded preceding and current row) as segment
    from counters
),

fallen as (
    select
        row_number,
        v < max(v) over (partition by series, segment order by ts_ms, row_number
                         rows between unbounded preceding and 1 preceding) as fell
    from segments
)

select
    b.row_number,
    b.series,
    b.value_text,
    b.ts_ms,
    b.line,
    case when not b.valid then null
         when b.v > b.high_v then b.check_name
         when f.fell then b.check_name
    end as implausible,
    b.limit_text
from bounded b
left join fallen f on f.row_number = b.row_number
