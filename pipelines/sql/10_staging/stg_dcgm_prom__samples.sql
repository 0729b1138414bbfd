-- Prometheus text exposition -> samples (series, value text, time in ms), as a view.
-- The file is read as CSV split at '}' (quote and escape off): DuckDB's parallel parser then
-- cuts `metric{labels` from ` value [timestamp]` for us, and the series string is the group
-- key as is - labels are parsed later, once per series. Up to three '}' inside label values
-- (or in an exemplar's) are put back together; more is a parse error for the whole file.
-- Input: view raw_prom_cols(a, b, c, d); {{ scrape_ms }} for samples without a timestamp.
-- OpenMetrics timestamps are seconds, Prometheus text milliseconds (1e11 s is year 5138).
-- {{ row_number }} is null for the fast pass and the line number for locating rejects.
-- {{ carried }}: more columns of raw_prom_cols kept on every sample, each after a comma (a batch
-- of small files read as one: the file's name), or nothing.
-- Every expression below runs once per sample (billions in a month of a large fleet), so each
-- is computed once: no nullif/coalesce over a repeated split, which DuckDB would evaluate for
-- every row whichever branch is taken.
with lines as (
    -- Comments are no samples. {{ comment_line }} tells them here, line by line (the numbered
    -- pass; a file whose head has comments), or is `false`: a comment then becomes a series of
    -- its own, dropped per group by stg_telemetry__groups (a test per series, not per line).
    select * from (select {{ row_number }} as row_number, a, b, c, d{{ carried }} from raw_prom_cols)
    where not ({{ comment_line }})
),

pieces as (
    -- An OpenMetrics exemplar (` # {trace_id="..."} 1.0 [time]` after the sample's value and
    -- time) brings braces of its own: the labels end before the first piece that holds the
    -- value, a blank, '#' and '{'. Tested only on a line cut more than once (the common line,
    -- one '}', pays nothing); `ex`: the piece the exemplar starts in (2 = b, 3 = c), else 0.
    select
        *,
        case when c is null then 0
             when regexp_matches(b, '^\s+\S+(\s+\S+)?\s+#\s*\{') then 2
             when d is not null and regexp_matches(c, '^\s+\S+(\s+\S+)?\s+#\s*\{') then 3
             else 0 end as ex
    from lines
),

split as (
    select
        row_number{{ carried }},
        case when b is null then split_part(trim(a), ' ', 1)
             when c is null or ex = 2 then a
             when d is null or ex = 3 then a || '}' || b
             else a || '}' || b || '}' || c end as series,
        -- 'value [timestamp]' after the labels; a label-less sample is 'metric value [timestamp]'
        ltrim(case when b is null then substr(trim(a), strpos(trim(a), ' '))
                   when ex = 2 then split_part(b, '#', 1)
                   when ex = 3 then split_part(c, '#', 1)
                   else coalesce(d, c, b) end) as rest,
        left(concat_ws('}', coalesce(a, ''), b, c, d), 200) as line
    from pieces
),

fields as (
    -- where the value ends: split_part and trim() cost twice these (trim: casts skip blanks)
    select row_number{{ carried }}, series, line, rest, strpos(rest, ' ') as gap from split
),

timed as (
    select row_number{{ carried }}, series, line, rest, gap,
           case when gap > 0 then left(rest, gap - 1) else rest end as value_text,
           -- whatever follows the value, however many blanks apart
           try_cast(case when gap > 0 then substr(rest, gap + 1) end as double) as ts
    from fields
)

select
    row_number{{ carried }},
    series,
    value_text,
    -- The scrape's time only where no time is written after the value (blanks are none): a
    -- written time that is no number, or past what milliseconds hold, is a reject (NULL), not
    -- a sample moved to the scrape's hour. The second test runs only where `ts` is NULL.
    case when ts is not null then try_cast(case when ts < 1e11 then ts * 1000 else ts end as bigint)
         when gap = 0 or trim(substr(rest, gap + 1)) = '' then {{ scrape_ms }} end as ts_ms,
    line
from timed
