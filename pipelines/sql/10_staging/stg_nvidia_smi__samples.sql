-- `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] -l N` logs -> cells, one per
-- data line and field read (sources/nvidia_smi_fields.csv), as a view.
-- Input: view raw_nvsmi_lines(line); _nvsmi_used(i, metric, column_name, unit): the fields read,
-- by position; _nvsmi_file(host, tz). nvidia-smi writes no quotes, so a line is its values
-- between commas, blanks trimmed. {{ header }}: the header line as written (trimmed), repeated
-- where a loop was restarted into the same file, or null (noheader). {{ n_columns }}: fields a
-- line has. {{ ts_i }}, {{ uuid_i }}, {{ index_i }}, {{ name_i }}, {{ host_i }}: positions of
-- timestamp, uuid, index, name and hostname (null where the query has none). Timestamps are
-- the machine's local time ("YYYY/MM/DD HH:MM:SS.msec"), read in the zone _nvsmi_file.tz.
-- A line of another shape is one cell with no metric: one reject.
-- {{ row_number }} is null for the fast pass and the cell's ordinal for locating rejects.
with numbered as (
    select row_number() over () as line_no, line from raw_nvsmi_lines
),

records as (
    select
        line_no,
        line,
        list_transform(string_split(line, ','), lambda x: trim(x)) as cell
    from numbered
    where trim(line) <> '' and trim(line) is distinct from {{ header }}
),

identified as (
    select
        r.line_no,
        r.line,
        r.cell,
        len(r.cell) = {{ n_columns }} as shaped,
        epoch_ms(timezone(d.tz, try_strptime(r.cell[{{ ts_i }}], ['%Y/%m/%d %H:%M:%S.%g', '%Y/%m/%d %H:%M:%S']))) as ts_ms,
        -- a bracketed value is nvidia-smi's "no value" ([N/A], [Not Supported]): no label then
        concat_ws(
            ',',
            'UUID="' || nullif(r.cell[{{ uuid_i }}], '[N/A]') || '"',
            'gpu="' || r.cell[{{ index_i }}] || '"',
            'modelName="' || replace(r.cell[{{ name_i }}], '"', '') || '"',
            'Hostname="' || replace(coalesce(nullif(r.cell[{{ host_i }}], '[N/A]'), d.host), '"', '') || '"'
        ) as labels
    from records r
    cross join _nvsmi_file d
),

cells as (
    select
        l.line_no,
        u.i,
        u.metric,
        l.labels,
        u.column_name,
        l.cell[u.i] as value_text,
        u.unit,
        l.ts_ms,
        'line ' || l.line_no || ': ' || left(l.line, 180) as line
    from identified l
    cross join _nvsmi_used u
    where l.shaped
    union all
    select line_no, 0, null, null, 'line', left(line, 200), null, null, 'line ' || line_no || ': ' || left(line, 180)
    from identified
    where not shaped
)

select {{ row_number }} as row_number, metric, labels, column_name, value_text, unit, ts_ms, line
from cells
