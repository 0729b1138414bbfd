-- nvidia-smi log records -> cells, one per record of the header's shape and column read, as a
-- view; a record of another shape is one cell with no metric (one reject).
-- Input: view {{ records }}(line_no, line, vals, shaped, ts_ms, labels) of the query-gpu CSV
-- (stg_nvidia_smi__samples.sql) or dmon (stg_nvidia_smi_dmon__samples.sql) model;
-- _nvsmi_used(i, metric, column_name, unit): the columns read, by position in vals.
-- {{ row_number }} is null for the fast pass and the cell's ordinal for locating rejects.
with cells as (
    select
        r.line_no,
        u.i,
        u.metric,
        r.labels,
        u.column_name,
        r.vals[u.i] as value_text,
        u.unit,
        r.ts_ms,
        'line ' || r.line_no || ': ' || left(r.line, 180) as line
    from {{ records }} r
    cross join _nvsmi_used u
    where r.shaped
    union all
    select
        line_no,
        0,
        null,
        null,
        'line',
        left(line, 200),
        null,
        null,
        'line ' || line_no || ': ' || left(line, 180)
    from {{ records }}
    where not shaped
)

select
    {{ row_number }} as row_number,
    metric,
    labels,
    column_name,
    value_text,
    unit,
    ts_ms,
    line
from cells
