-- `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] -l N` logs -> records, one per
-- line that is neither blank nor the header, as a view (stg_nvidia_smi__cells.sql makes cells).
-- Input: view raw_nvsmi_lines(line_no, line); _nvsmi_file(host, tz). nvidia-smi writes no quotes, so a
-- line is its values between commas, blanks trimmed. {{ header }}: the header line as written
-- (trimmed), repeated where a loop was restarted into the same file, or null (noheader).
-- {{ n_columns }}: fields a line has. {{ ts_i }}, {{ uuid_i }}, {{ index_i }}, {{ name_i }},
-- {{ host_i }}: positions of timestamp, uuid, index, name and hostname (null where the query
-- has none). Timestamps are the machine's local time ("YYYY/MM/DD HH:MM:SS.msec"), read in
-- the zone _nvsmi_file.tz.
with split as (
    select
        line_no,
        line,
        list_transform(string_split(line, ','), lambda x: trim(x)) as cell
    from raw_nvsmi_lines
    where trim(line) <> '' and trim(line) is distinct from {{ header }}
),

records as (
    select
        line_no,
        line,
        cell as vals,
        len(cell) = {{ n_columns }} as shaped,
        try_strptime(cell[{{ ts_i }}], ['%Y/%m/%d %H:%M:%S.%g', '%Y/%m/%d %H:%M:%S']) as local_ts,
        -- a bracketed value is nvidia-smi's "no value" ([N/A], [Not Supported]): no label then
        nullif(cell[{{ uuid_i }}], '[N/A]') as gpu_uuid,
        cell[{{ index_i }}] as gpu_index,
        replace(cell[{{ name_i }}], '"', '') as gpu_name,
        replace(nullif(cell[{{ host_i }}], '[N/A]'), '"', '') as host
    from split
)

select
    r.line_no,
    r.line,
    r.vals,
    r.shaped,
    epoch_ms(timezone(d.tz, r.local_ts)) as ts_ms,
    concat_ws(
        ',',
        'UUID="' || r.gpu_uuid || '"',
        'gpu="' || r.gpu_index || '"',
        'modelName="' || r.gpu_name || '"',
        'Hostname="' || coalesce(r.host, replace(d.host, '"', '')) || '"'
    ) as labels
from records r
cross join _nvsmi_file d
