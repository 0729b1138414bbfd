-- Grain: month x file_id. The loaded files a month's figures rest on: billing files with charges
-- in the month, telemetry files with GPU-hours in it, CodeCarbon files with runs ending in it,
-- invoices files with an invoice for it (the reconciliation rests on them), work logs with a job
-- window in it (int_job_windows: the rows not restated by a later file), grid-hourly files
-- with hours in it, instruments files whose periods reach it (market-based CO2e rests on them).
-- A report of the month lists and hashes these and no other, so its lineage, data quality and
-- provenance do not change when another month's files are loaded beside it.
with billing as (
    select distinct month, file_id, 'billing' as role from int_charges_teams
),

telemetry as (
    select distinct strftime(hour_start, '%Y-%m') as month, file_id, 'telemetry' as role from gpu_hour_parts
),

runs as (
    select distinct strftime(end_utc, '%Y-%m') as month, file_id, 'runs' as role from runs
),

work as (
    select distinct month, file_id, 'work' as role from int_job_windows
),

invoiced as (
    select distinct period as month, file_id, 'invoices' as role from invoices
),

grid as (
    select distinct strftime(hour_start, '%Y-%m') as month, file_id, 'grid' as role from grid_hours
),

declared as (
    select distinct strftime(t.m, '%Y-%m') as month, i.file_id, 'instruments' as role
    from instruments i,
         unnest(generate_series(date_trunc('month', i.period_start), i.period_end - interval 1 second, interval 1 month)) t (m)
),

files as (
    select * from billing
    union all
    select * from telemetry
    union all
    select * from runs
    union all
    select * from work
    union all
    select * from invoiced
    union all
    select * from grid
    union all
    select * from declared
)

select f.month, f.file_id, f.role, s.sha256
from files f
join source_files s using (file_id)
where s.status = 'loaded'
