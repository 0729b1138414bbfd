-- The plausibility limits of each series of a telemetry file (sources/reference/
-- telemetry_limits.csv), in the series' own unit, and whether its groups' good readings leave
-- them: a reading above its ceiling, or an energy counter that falls (a reset, or no reset).
-- Grain: metric x label set. Input: _tel (groups with their field and GPU model),
-- telemetry_limits (the CSV), gpu_ratings(key, rating_w: the top of each GPU's TDP range,
-- gpu_specs). A GPU model gpu_specs lacks is held to the highest rating it has.
-- {{ carried }}: `, filename` for a batch of files staged as one (each file's series apart), or
-- nothing.
with series as (
    select
        metric,
        labels{{ carried }},
        pick(field) as field,
        pick(to_canonical) as to_canonical,
        pick(gpu_model_raw) as gpu_model_raw,
        -- a fall inside an hour (an earlier reading above the last, a later one below the
        -- first), or from one hour's last reading to the next hour's first
        bool_or(v_max > v_last or v_min < v_first or v_first < prev_last) as falls,
        max(v_max) as v_max
    from (
        select *, lag(v_last) over (partition by metric, labels{{ carried }} order by hour_index) as prev_last
        from _tel
        where field is not null and not bad_metric and not no_gpu and n_good > 0
    )
    group by metric, labels{{ carried }}
),

rated as (
    select
        s.*,
        r.rating_w is not null as rated,
        coalesce(r.rating_w, (select max(rating_w) from gpu_ratings)) as rating_w
    from series s
    left join gpu_ratings r on r.key = gpu_key(s.gpu_model_raw)
),

limited as (
    select
        r.*,
        l.limit_id,
        l.bound,
        l.basis,
        l.value,
        l.value * case when l.basis = 'tdp_w' then r.rating_w else 1 end as limit_canonical
    from rated r
    join telemetry_limits l on l.applies_to = r.field
)

select
    metric,
    labels{{ carried }},
    field,
    'plausible_' || regexp_replace(field, '_(w|ratio|mj)$', '') || case when bound = 'reset' then '_reset' else '' end as check_name,
    -- the ceiling of a reading, in the series' unit; for a counter, the most it can hold after
    -- a fall per ms since the reading before (W x ms = mJ)
    case when bound = 'max' then limit_canonical / to_canonical end as high_v,
    case when bound = 'reset' then limit_canonical / to_canonical end as reset_v_per_ms,
    (bound = 'max' and v_max > limit_canonical / to_canonical) or (bound = 'reset' and falls) as exceeded,
    limit_id || ' (telemetry_limits.csv): '
    || case when bound = 'reset' then 'the counter fell, by more than a reset allows (' else 'above ' || (limit_canonical / to_canonical) || ' (' end
    || case when basis = 'tdp_w' then case when rated then gpu_model_raw else 'a GPU gpu_specs lacks, held to the highest' end || ' rated ' || rating_w || ' W x ' || value
            else field || ' at most ' || value end || ')' as limit_text
from limited
