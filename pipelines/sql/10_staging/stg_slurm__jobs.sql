-- sacct --parsable2 export -> slurm_jobs. Input: temp view raw_sacct (row_number, _fields: how
-- many |-separated fields the line has, text cells under canonical names) and table
-- _sacct_file (tz: the zone Slurm's local Start/End are in, width: the header's field count).
-- Grain: one row per job record (allocation or step).
-- JobID: 123, 123_4 (array task), 123+0 (heterogeneous component), 123.batch / 123.0 (steps).
-- AllocTRES: `billing=16,cpu=16,gres/gpu=4,gres/gpu:h100=4,mem=64G,node=1`: gres/gpu is the
-- count; without it the typed counts (gres/gpu:<type>) add up. Start/End: Slurm's local time
-- (SLURM_TIME_FORMAT's default, ISO 8601 without a zone); `Unknown` or `None` where there is
-- none: a pending job has no window, a running one ends at Start + ElapsedRaw.
with source as (
    select * from raw_sacct
),

typed as (
    select
        row_number,
        _fields,
        nullif(trim(job_id), '') as job_id,
        regexp_extract(trim(job_id), '^[^.]+') as job_key,
        contains(trim(job_id), '.') as is_step,
        nullif(trim(job_name), '') as job_name,
        nullif(trim(user_name), '') as user_name,
        nullif(trim(account), '') as account,
        nullif(trim(partition), '') as partition,
        nullif(trim(cluster), '') as cluster,
        coalesce(
            num(nullif(regexp_extract(alloc_tres, '(^|,)gres/gpu=([^,]*)', 2), '')),
            list_sum(list_transform(regexp_extract_all(alloc_tres, '(^|,)gres/gpu:[^=,]+=([^,]*)', 2), lambda n: num(n))),
            0) as gpus,
        nullif(regexp_extract(alloc_tres, 'gres/gpu:([^=,]+)=', 1), '') as gpu_type,
        nullif(trim(node_list), '') as node_list,
        nullif(split_part(trim(state), ' ', 1), '') as state,
        timezone('UTC', timezone((select tz from _sacct_file), try_strptime(trim(start_time), '%Y-%m-%dT%H:%M:%S'))) as start_at,
        timezone('UTC', timezone((select tz from _sacct_file), try_strptime(trim(end_time), '%Y-%m-%dT%H:%M:%S'))) as end_at,
        num(elapsed_raw) as elapsed_s,
        num(consumed_energy_raw) as consumed_energy_j,
        (select width from _sacct_file) as width,
        alloc_tres as _tres, start_time as _start, end_time as _end, elapsed_raw as _elapsed,
        consumed_energy_raw as _energy
    from source
),

windowed as (
    select
        *,
        coalesce(end_at, start_at + to_seconds(elapsed_s)) as end_utc,
        -- a GPU count Slurm writes is a whole number of devices
        coalesce(regexp_extract_all(_tres, '(^|,)gres/gpu(:[^=,]+)?=([^,]*)', 3), []) as _gpu_counts,
        row_number() over (partition by job_id order by row_number) as _copy
    from typed
)

select
    row_number, job_id, job_key, is_step, job_name, user_name, account, partition, cluster, gpus, gpu_type,
    node_list, state, start_at as start_utc, end_utc, consumed_energy_j,
    -- a line of the wrong width has its cells out of place: that is its one problem
    case when _fields <> width then [
        {'column_name': null::varchar, 'check_name': 'field_count', 'value': _fields::varchar,
         'message': printf('%d fields, the header has %d: a | inside a name, or a cut line', _fields, width)}
    ] else errors([
        row_err(job_id is null, 'JobID', 'not_null', null::varchar, 'no JobID'),
        row_err(start_at is null and coalesce(upper(trim(_start)), '') not in ('UNKNOWN', 'NONE', ''), 'Start', 'timestamp', _start,
                'Start is not a time as sacct writes it (2026-10-03T08:00:00), Unknown or None'),
        row_err(end_at is null and coalesce(upper(trim(_end)), '') not in ('UNKNOWN', 'NONE', ''), 'End', 'timestamp', _end,
                'End is not a time as sacct writes it (2026-10-03T08:00:00), Unknown or None'),
        cast_err('ElapsedRaw', _elapsed, elapsed_s, 'number'),
        cast_err('ConsumedEnergyRaw', _energy, consumed_energy_j, 'number'),
        row_err(list_bool_or(list_transform(_gpu_counts, lambda n: not regexp_full_match(n, '[0-9]+'))),
                'AllocTRES', 'gpu_count', _tres, 'a gres/gpu count that is not a whole number of devices'),
        row_err(start_at is not null and end_at is null and elapsed_s is null, 'End', 'has_window', _end,
                'the job started but has no End and no ElapsedRaw: export ElapsedRaw too'),
        row_err(end_utc < start_at, 'End', 'end_after_start', _end,
                'End is before Start'),
        row_err(elapsed_s < 0, 'ElapsedRaw', 'non_negative', _elapsed,
                'ElapsedRaw is negative'),
        row_err(_copy > 1 and job_id is not null, 'JobID', 'one_row_per_job', job_id,
                'this JobID appears on an earlier row of the file')
    ]) end as _errors
from windowed
