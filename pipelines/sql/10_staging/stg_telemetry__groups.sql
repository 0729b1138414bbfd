-- Telemetry samples -> one row per series (metric{labels) x UTC hour, in one pass: raw samples
-- are never materialised (a month of a large fleet is billions of samples but thousands of
-- series), and the series string is split into metric and labels per group, not per sample.
-- Bad values are counted per group and kept out of the aggregates.
-- Input: view {{ samples }}(ts_ms, the reader's key columns, and its value) built by the reader;
-- {{ value }} is that value as a double (a text value is try_cast: a bad one is a reject, not an
-- error; a reader that had DuckDB's CSV parser type it passes the column itself).
-- {{ carried }}: more columns of the samples to group by and keep, each after a comma (a batch
-- of small files staged as one: the file's name), or nothing.
-- {{ keys }} are the columns a series is identified by (Prometheus text: the series string as
-- written; a long CSV: its metric and label columns, so no label text is built per sample), and
-- {{ metric }} / {{ labels }} turn one group's keys into the metric name and label text.
-- {{ ts_min_ms }} / {{ ts_max_ms }}: the sample times a clock can write (telemetry_limits.csv
-- sample_time_*); {{ plausible }}: `true`, or (the second pass over a file with a reading past
-- its limits, sources/telemetry.py) the test that the sample's reading is within them.
with valued as (
    -- A good value is a finite, non-negative reading below DCGM's blank sentinels, with a time
    -- a clock can write (NaN and infinities fail the comparisons), within its limits. Which test a bad one fails is worked out only
    -- when there are some, by the pass that locates them (stg_telemetry__reject_lines.sql).
    -- good_ts, the time of a good sample, is worked out once per sample: four aggregates take
    -- it as it is, where a FILTER or CASE in each cost a twentieth of the pass (issue 24).
    select {{ keys }}{{ carried }}, ts_ms, good, case when good is not null then ts_ms end as good_ts
    from (
        select
            {{ keys }}{{ carried }},
            ts_ms,
            case when v >= 0 and v < dcgm_blank_min() and ts_ms between {{ ts_min_ms }} and {{ ts_max_ms }}
                      and not dcgm_int32_blank(v) and {{ plausible }} then v end as good
        from (select *, {{ value }} as v from {{ samples }})
    )
),

grouped as (
    select
        {{ keys }}{{ carried }},
        ts_ms // 3600000 as hour_index,
    count(*) as n_lines,
    count(good) as n_good,
    min(good_ts) as t0_ms,
    max(good_ts) as t1_ms,
    arg_min(good, good_ts) as v_first,
    arg_max(good, good_ts) as v_last,
    max(good) as v_max,
    min(good) as v_min,
    sum(good) as v_sum
from valued
group by {{ keys }}{{ carried }}, ts_ms // 3600000
)

select {{ metric }} as metric, {{ labels }} as labels, * exclude ({{ keys }})
from grouped
