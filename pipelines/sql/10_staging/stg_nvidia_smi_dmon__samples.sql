-- `nvidia-smi dmon` logs -> cells, one per data line and column read, as a view.
-- Input: view raw_nvsmi_lines(line); _nvsmi_used(i, metric, column_name, unit): the columns
-- read, by position among a line's blank-separated tokens; _nvsmi_file(host, tz, start_ms,
-- interval_ms). The `# gpu pwr ...` header and `# Idx W ...` unit lines repeat every screenful;
-- every # line is no sample. {{ n_columns }}: tokens a data line has; {{ gpu_i }}: the Idx
-- column; {{ date_i }}, {{ time_i }}: the YYYYMMDD and HH:MM:SS columns of `-o DT` (local time,
-- read in _nvsmi_file.tz), or null: the k-th line of a GPU is then at start + (k - 1) x interval.
-- A line of another shape is one cell with no metric: one reject.
-- {{ row_number }} is null for the fast pass and the cell's ordinal for locating rejects.
with numbered as (
    select row_number() over () as line_no, line from raw_nvsmi_lines
),

records as (
    select
        line_no,
        line,
        regexp_split_to_array(trim(line), '\s+') as tok
    from numbered
    where trim(line) <> '' and not starts_with(ltrim(line), '#')
),

shaped as (
    select *, len(tok) = {{ n_columns }} and regexp_full_match(tok[{{ gpu_i }}], '[0-9]+') as shaped
    from records
),

timed as (
    select
        s.*,
        case when {{ date_i }} is null
             then d.start_ms + (row_number() over (partition by s.shaped, s.tok[{{ gpu_i }}] order by s.line_no) - 1) * d.interval_ms
             else epoch_ms(timezone(d.tz, try_strptime(s.tok[{{ date_i }}] || ' ' || s.tok[{{ time_i }}], '%Y%m%d %H:%M:%S')))
        end as ts_ms,
        'gpu="' || s.tok[{{ gpu_i }}] || '",Hostname="' || replace(d.host, '"', '') || '"' as labels
    from shaped s
    cross join _nvsmi_file d
),

cells as (
    select
        l.line_no,
        u.i,
        u.metric,
        l.labels,
        u.column_name,
        l.tok[u.i] as value_text,
        u.unit,
        l.ts_ms,
        'line ' || l.line_no || ': ' || left(l.line, 180) as line
    from timed l
    cross join _nvsmi_used u
    where l.shaped
    union all
    select line_no, 0, null, null, 'line', left(line, 200), null, null, 'line ' || line_no || ': ' || left(line, 180)
    from timed
    where not shaped
)

select {{ row_number }} as row_number, metric, labels, column_name, value_text, unit, ts_ms, line
from cells
