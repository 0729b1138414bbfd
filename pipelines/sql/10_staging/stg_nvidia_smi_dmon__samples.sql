-- `nvidia-smi dmon` logs -> records, one per line that is neither blank nor a # line, as a view
-- (stg_nvidia_smi__cells.sql makes cells).
-- Input: view raw_nvsmi_lines(line_no, line); _nvsmi_file(host, tz, start_ms, interval_ms). The
-- `# gpu pwr ...` header and `# Idx W ...` unit lines repeat every screenful. {{ n_columns }}:
-- blank-separated tokens a data line has; {{ gpu_i }}: the Idx column; {{ date_i }},
-- {{ time_i }}: the YYYYMMDD and HH:MM:SS columns of `-o DT` (local time, read in
-- _nvsmi_file.tz), or null: the k-th line of a GPU is then at start + (k - 1) x interval.
with split as (
    select
        line_no,
        line,
        regexp_split_to_array(trim(line), '\s+') as tok
    from raw_nvsmi_lines
    where trim(line) <> '' and not starts_with(ltrim(line), '#')
),

records as (
    select
        line_no,
        line,
        tok as vals,
        tok[{{ gpu_i }}] as gpu_index,
        len(tok) = {{ n_columns }} and regexp_full_match(tok[{{ gpu_i }}], '[0-9]+') as shaped,
        {{ date_i }} is not null as dated,
        try_strptime(tok[{{ date_i }}] || ' ' || tok[{{ time_i }}], '%Y%m%d %H:%M:%S') as local_ts
    from split
),

counted as (
    select
        *,
        row_number() over (partition by shaped, gpu_index order by line_no) as k
    from records
)

select
    c.line_no,
    c.line,
    c.vals,
    c.shaped,
    case when c.dated then epoch_ms(timezone(d.tz, c.local_ts)) else d.start_ms + (c.k - 1) * d.interval_ms end as ts_ms,
    'gpu="' || c.gpu_index || '",Hostname="' || replace(d.host, '"', '') || '"' as labels
from counted c
cross join _nvsmi_file d
