-- dcgmi stats --job --verbose -> dcgm_job_stats. Input: temp table raw_dcgmi_stats (row_number:
-- the block, job_id, gpu_id and the text of each field as dcgmi prints it) and _dcgmi_file (tz:
-- the zone of its local times; max_power_w: the most any GPU of gpu_specs can draw on average,
-- its top rating x telemetry_limits power_w_max). Times are C's asctime (Fri Jul 12 11:48:45 2024).
-- N/A is no reading. Grain: one row per block.
with source as (
    select * from raw_dcgmi_stats
),

typed as (
    select
        s.row_number,
        s.job_id,
        s.gpu_id,
        timezone('UTC', timezone(d.tz, try_strptime(trim(s.start_time), '%a %b %d %H:%M:%S %Y'))) as start_utc,
        timezone('UTC', timezone(d.tz, try_strptime(trim(s.end_time), '%a %b %d %H:%M:%S %Y'))) as end_utc,
        num(nullif(trim(s.execution_s), 'N/A')) as execution_s,
        num(nullif(trim(s.energy_j), 'N/A')) as energy_j,
        num(nullif(trim(s.power_w_avg), 'N/A')) as power_w_avg,
        num(nullif(trim(s.sm_util_avg), 'N/A')) / 100 as sm_util_avg,
        num(nullif(trim(s.mem_util_avg), 'N/A')) / 100 as mem_util_avg,
        d.host,
        d.max_power_w,
        s.start_time as _start, s.end_time as _end, s.execution_s as _exec, s.energy_j as _energy,
        s.sm_util_avg as _sm
    from source s
    cross join _dcgmi_file d
)

select
    row_number, job_id, host, gpu_id, start_utc, end_utc, execution_s, energy_j, power_w_avg, sm_util_avg, mem_util_avg,
    errors([
        row_err(start_utc is null, 'Start Time', 'timestamp', _start,
                'Start Time is not a time as dcgmi prints it (Fri Jul 12 11:48:45 2024)'),
        row_err(end_utc is null, 'End Time', 'timestamp', _end,
                'End Time is not a time as dcgmi prints it: the job was not stopped with --jstop'),
        row_err(end_utc < start_utc, 'End Time', 'end_after_start', _end,
                'End Time is before Start Time'),
        row_err(energy_j is null, 'Energy Consumed (Joules)', 'parses_as_number', _energy,
                'no energy reading'),
        row_err(energy_j < 0, 'Energy Consumed (Joules)', 'non_negative', _energy,
                'energy is negative'),
        -- a GPU block's energy over its window is its mean power: above what any GPU draws, no
        -- device produced it (the summary block adds the job's GPUs, so it is not held to one)
        row_err(gpu_id is not null and energy_j / nullif(epoch(end_utc) - epoch(start_utc), 0) > max_power_w,
                'Energy Consumed (Joules)', 'plausible_power', _energy,
                printf('%.0f W on average over the job: more than any GPU draws (%.0f W)',
                               energy_j / (epoch(end_utc) - epoch(start_utc)), max_power_w)),
        row_err(sm_util_avg > 1 or sm_util_avg < 0, 'SM Utilization (%)', 'plausible_util', _sm,
                'SM utilisation outside 0-100 %')
    ]) as _errors
from typed
