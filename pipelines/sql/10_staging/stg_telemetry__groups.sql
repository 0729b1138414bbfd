-- Telemetry samples -> one row per series (metric{labels) x UTC hour, in one pass: raw samples
-- are never materialised (a month of a large fleet is billions of samples but thousands of
-- series), and the series string is split into metric and labels per group, not per sample.
-- Bad values are counted per group and kept out of the aggregates.
-- Input: view _tel_samples(series, value_text, ts_ms, line) built by the reader.
with checked as (
    select
        series,
        ts_ms,
        v,
        v is null or ts_ms is null as bad_syntax,
        isnan(v) or isinf(v) as bad_nonfinite,
        v >= dcgm_blank_min() as bad_sentinel,
        v < 0 as bad_negative   -- no DCGM field is negative
    from (select *, try_cast(value_text as double) as v from _tel_samples)
),

valued as (
    select *, case when not (bad_syntax or bad_nonfinite or bad_sentinel or bad_negative) then v end as good
    from checked
)

select
    split_part(series, '{', 1) as metric,
    case when strpos(series, '{') > 0 then substr(series, strpos(series, '{') + 1) else '' end as labels,
    ts_ms // 3600000 as hour_index,
    count(*) as n_lines,
    count(*) filter (where bad_syntax) as n_bad_syntax,
    count(*) filter (where bad_nonfinite) as n_bad_nonfinite,
    count(*) filter (where bad_sentinel) as n_bad_sentinel,
    count(*) filter (where bad_negative) as n_negative,
    count(good) as n_good,
    min(ts_ms) filter (where good is not null) as t0_ms,
    max(ts_ms) filter (where good is not null) as t1_ms,
    arg_min(good, case when good is not null then ts_ms end) as v_first,
    arg_max(good, case when good is not null then ts_ms end) as v_last,
    max(good) as v_max,
    min(good) as v_min,
    sum(good) as v_sum
from valued
group by series, ts_ms // 3600000
