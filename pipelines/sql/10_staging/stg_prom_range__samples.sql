-- Prometheus query_range matrix -> samples. Input: view raw_prom_range(r) with one series per
-- row (r.metric: labels incl. __name__, r.values: [unix seconds, "value"] pairs).
-- {{ row_number }}: null for the fast pass, the sample's ordinal for locating rejects.
with series as (
    select
        r.metric['__name__'] as metric,
        -- each value written escaped, as the exposition format writes it (the label parser
        -- decodes it): a quote or backslash in a value stays the value's
        array_to_string(list_transform(list_filter(map_entries(r.metric), lambda e: e.key <> '__name__'),
                                       lambda e: e.key || '="' || replace(replace(replace(e.value, '\', '\\'), '"', '\"'),
                                                                          chr(10), '\n') || '"'), ',') as labels,
        -- values is a reserved word: quoted, it reads as a column to any SQL parser
        r."values" as pairs  -- noqa: RF06
    from raw_prom_range
),

samples as (
    select metric, labels, unnest(pairs) as pair from series
)

select
    {{ row_number }} as row_number,
    metric || '{' || labels as series,
    pair ->> 1 as value_text,
    -- a time past what milliseconds hold is NULL (a rejected sample), not an error for the file
    try_cast(try_cast(pair ->> 0 as double) * 1000 as bigint) as ts_ms,
    left(pair::varchar, 200) as line
from samples
