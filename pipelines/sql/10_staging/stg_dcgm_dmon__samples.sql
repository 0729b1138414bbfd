-- `dcgmi dmon` logs -> samples. Input: view raw_dmon_lines(line); _dmon(fields: the column
-- short names of the #Entity header, host, start_ms, interval_ms). Headers repeat every 14
-- samples; data lines are `GPU 0  245.3 ...`, `GPU-I 3 ...`, optionally prefixed by a wall-clock
-- time (ISO 8601 or epoch ms) that a wrapper added - dmon prints none. Without one, the k-th
-- line of an entity is at start + (k - 1) x interval. N/A is DCGM's blank: no reading.
-- Not samples: blank lines, # headers, the ID units line ({{ units }}), dcgmi's stop message
-- ({{ stopped }}). Any other line is one sample row that names no GPU: one reject per line.
-- A row is one sample (line x field); {{ row_number }} is null for the fast pass and the sample's
-- ordinal for locating rejects, whose value names the line. {{ entity_types }}: dmon's entity
-- type tokens (sources/dcgm_dmon.py ENTITY_TYPES).
with numbered as (
    select row_number() over () as line_no, line from raw_dmon_lines
),

content_lines as (
    select *, regexp_split_to_array(trim(line), '\s+') as tok
    from numbered
    where trim(line) <> '' and not starts_with(ltrim(line), '#')
        and not regexp_matches(line, {{ units }}) and not regexp_matches(line, {{ stopped }})
),

entities as (
    select
        *,
        list_contains({{ entity_types }}, tok[1]) as bare,
        -- a wall-clock prefix is the first token when the second is the entity type
        not list_contains({{ entity_types }}, tok[1]) and list_contains({{ entity_types }}, tok[2]) as prefixed
    from content_lines
),

located as (
    select
        line_no,
        line,
        case when prefixed then tok[2] else tok[1] end as entity_type,
        case when prefixed then tok[3] else tok[2] end as entity_id,
        case when prefixed then tok[4:] else tok[3:] end as values,
        case when prefixed then coalesce(epoch_ms(utc_ts(tok[1])), try_cast(tok[1] as bigint)) end as prefix_ms,
        row_number() over (partition by case when prefixed then tok[2] || tok[3] else tok[1] || tok[2] end order by line_no) as k
    from entities
    where bare or prefixed
),

samples as (
    select
        l.line_no,
        f.i,
        'dmon:' || f.name || '{' || case l.entity_type
            when 'GPU' then 'gpu="' || l.entity_id || '",Hostname="' || d.host || '"'
            when 'GPU-I' then 'GPU_I_ID="' || l.entity_id || '",Hostname="' || d.host || '"'
            else 'entity="' || l.entity_type || ' ' || coalesce(l.entity_id, '') || '"'
        end as series,
        case when l.values[f.i] = 'N/A' then dcgm_blank_min()::varchar else l.values[f.i] end as value_text,
        coalesce(l.prefix_ms, d.start_ms + (l.k - 1) * d.interval_ms) as ts_ms,
        'line ' || l.line_no || ': ' || left(l.line, 180) as line
    from located l
    cross join _dmon d
    cross join (select unnest(d2.fields) as name, generate_subscripts(d2.fields, 1) as i from _dmon d2) f
    union all
    -- neither a sample nor a header: one row, no metric, no value
    select line_no, 0, 'dmon_line{', null, null, 'line ' || line_no || ': ' || left(line, 180)
    from entities
    where not bare and not prefixed
)

select {{ row_number }} as row_number, series, value_text, ts_ms, line
from samples
