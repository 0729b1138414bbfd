-- Work log (CSV, JSON lines, Parquet) -> work_log. Input: temp view raw_work (text cells under
-- canonical names, row_number). Grain: one row per data row = one job or serving window.
-- Checks across columns are here (the pandera model WorkLog checks each column): the window
-- ends after it starts, the job has a placement and a unit of work, active parameters do not
-- exceed the total, and a job window (job_id, start) appears once in the file.
with source as (
    select * from raw_work
),

typed as (
    select
        row_number,
        nullif(trim(job_id), '') as job_id,
        -- serving and inference are one workload here: forward passes only
        case lower(trim(workload)) when 'inference' then 'serving' else nullif(lower(trim(workload)), '') end as workload,
        nullif(trim(namespace), '') as namespace,
        nullif(trim(pod), '') as pod,
        nullif(trim(host), '') as host,
        -- a JSON array (["GPU-a", "GPU-b"]) or a list separated by ; , or spaces
        list_filter(regexp_split_to_array(regexp_replace(coalesce(trim(gpu_uuids), ''), '[\[\]"]', '', 'g'), '[;,\s]+'),
                    lambda u: u <> '') as gpu_uuids,
        num(gpus) as gpus,
        utc_ts(start_utc) as start_utc,
        utc_ts(end_utc) as end_utc,
        num(params) as params,
        num(active_params) as active_params,
        num(tokens) as tokens,
        num(samples) as samples,
        num(requests) as requests,
        nullif(lower(trim(precision)), '') as precision,
        nullif(trim(gpu_model), '') as gpu_model_raw,
        num(tokens_per_s) as tokens_per_s,
        -- raw text kept for the checks below
        start_utc as _start, end_utc as _end, gpus as _gpus, params as _params, active_params as _active,
        tokens as _tokens, samples as _samples, requests as _requests, tokens_per_s as _tps
    from source
),

checked as (
    select
        *,
        row_number() over (partition by job_id, start_utc order by row_number) as _copy
    from typed
)

select
    row_number, job_id, workload, namespace, pod, host, gpu_uuids, gpus, start_utc, end_utc, params, active_params,
    tokens, samples, requests, precision, gpu_model_raw,
    null::varchar as gpu_model,    -- resolved by the reader from the alias catalog
    tokens_per_s,
    errors([
        cast_err('start_utc', _start, start_utc, 'timestamp'),
        cast_err('end_utc', _end, end_utc, 'timestamp'),
        cast_err('gpus', _gpus, gpus, 'number'),
        cast_err('params', _params, params, 'number'),
        cast_err('active_params', _active, active_params, 'number'),
        cast_err('tokens', _tokens, tokens, 'number'),
        cast_err('samples', _samples, samples, 'number'),
        cast_err('requests', _requests, requests, 'number'),
        cast_err('tokens_per_s', _tps, tokens_per_s, 'number'),
        case when end_utc <= start_utc then
            {'column_name': 'end_utc', 'check_name': 'end_after_start', 'value': left(_end, 200),
             'message': 'end_utc is not after start_utc'}
        end,
        case when namespace is null and host is null then
            {'column_name': 'namespace', 'check_name': 'has_placement', 'value': null::varchar,
             'message': 'no placement: give namespace (and pod) or host (and gpu_uuids)'}
        end,
        case when coalesce(tokens, samples, requests) is null and coalesce(_tokens, _samples, _requests, '') = '' then
            {'column_name': 'tokens', 'check_name': 'has_units_of_work', 'value': null::varchar,
             'message': 'no units of work: give tokens, samples or requests'}
        end,
        case when active_params > params then
            {'column_name': 'active_params', 'check_name': 'active_params_at_most_params', 'value': left(_active, 200),
             'message': 'active_params exceeds params'}
        end,
        case when _copy > 1 and job_id is not null and start_utc is not null then
            {'column_name': 'job_id', 'check_name': 'one_row_per_job_window', 'value': left(job_id, 200),
             'message': 'this job_id and start_utc appear on an earlier row of the file'}
        end
    ]) as _errors
from checked
