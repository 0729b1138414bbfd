-- nvidia-smi cells -> each cell with the first check it fails (null: a good sample), and its
-- series and value as stg_telemetry__groups reads them.
-- Input: view {{ cells }}(row_number, metric, labels, column_name, value_text, unit, ts_ms, line)
-- of one reader (query-gpu CSV, dmon, exporter text); _nvsmi_limits(metric, low, high) from
-- sources/nvidia_smi_fields.csv (bounds as written there, text). A cell without a metric is a line of no known shape. A metric
-- outside that file (the exporter's other gauges) is left to the telemetry checks as it is.
with cells as (
    select
        c.*,
        f.low,
        f.high,
        f.metric is not null as mapped,
        trim(c.value_text) as written
    from {{ cells }} c
    left join _nvsmi_limits f on f.metric = c.metric
),

valued as (
    select
        *,
        -- nvidia-smi prints the unit after the number unless --format has nounits: '345.12 W'
        case when unit is not null and ends_with(written, ' ' || unit)
             then rtrim(left(written, length(written) - length(unit))) else written end as number_text
    from cells
),

checked as (
    select
        *,
        case
            when metric is null then 'record_shape'
            when not mapped then null
            when ts_ms is null then 'parses_as_timestamp'
            -- nvidia-smi's "no reading": [N/A], [Not Supported], [Unknown Error]; dmon's '-'
            when written in ('-', 'N/A', '') or starts_with(written, '[') then 'reading_present'
            when try_cast(number_text as double) is null then 'parses_as_number'
            when not isfinite(try_cast(number_text as double)) then 'finite'
            when try_cast(number_text as double) < low::double then 'greater_than_or_equal_to(' || low || ')'
            when try_cast(number_text as double) > high::double then 'less_than_or_equal_to(' || high || ')'
        end as check_name
    from valued
)

select
    row_number,
    metric || '{' || labels as series,
    number_text as value_text,
    ts_ms,
    line,
    column_name,
    case when metric is null then line else written end as value,
    check_name,
    split_part(line, ':', 1) || ': ' || case check_name
        when 'record_shape' then 'not a sample line: its fields are not the header''s'
        when 'parses_as_timestamp' then 'no time: the timestamp does not parse'
        when 'reading_present' then 'nvidia-smi printed no reading (not supported, or MIG mode on); treated as missing'
        when 'parses_as_number' then 'not a number' || coalesce(' in ' || unit, '')
        when 'finite' then 'value is NaN or infinite'
        else 'a reading no GPU can produce'
    end as message
from checked
