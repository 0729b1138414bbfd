-- Prometheus text exposition -> samples (metric, label text, value text, time in ms), a view:
-- string splitting, not regex (5x faster over a whole file). Comments and blank lines are not
-- samples. Input: view raw_prom_lines(line); _scrape(scrape_ms) for samples without their own
-- timestamp. OpenMetrics timestamps are seconds, Prometheus text milliseconds (1e11 s = year 5138).
-- {{ row_number }} is null for the fast pass and the line number for the pass that locates rejects.
with lines as (
    select * from (select {{ row_number }} as row_number, line from raw_prom_lines)
    where line <> '' and not starts_with(line, '#') and trim(line) <> ''
),

split as (
    select
        row_number,
        case when strpos(line, '{') > 0 then split_part(line, '{', 1) else split_part(trim(line), ' ', 1) end as metric,
        case when strpos(line, '{') > 0 then split_part(split_part(line, '{', 2), '} ', 1) else '' end as labels,
        trim(case when strpos(line, '{') > 0 then split_part(line, '} ', 2)
                  else substr(trim(line), strpos(trim(line), ' ') + 1) end) as rest,
        left(line, 200) as line
    from lines
)

select
    row_number,
    metric,
    labels,
    split_part(rest, ' ', 1) as value_text,
    coalesce((case when ts < 1e11 then ts * 1000 else ts end)::bigint, (select scrape_ms from _scrape)) as ts_ms,
    line
from (select *, try_cast(nullif(split_part(rest, ' ', 2), '') as double) as ts from split)
