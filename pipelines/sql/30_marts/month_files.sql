-- Grain: month x file_id. The loaded files a month's figures rest on: billing files with charges
-- in the month, telemetry files with GPU-hours in it, CodeCarbon files with runs ending in it,
-- invoices files with an invoice for it (the reconciliation rests on them), work logs with a job
-- window in it (int_job_windows: the rows not restated by a later file), grid-hourly files
-- with hours in it, instruments files whose periods reach it (market-based CO2e rests on them),
-- the exchange-rate files its conversions read (the day rule's rates, which may lie in the
-- lookback before its first day, and its own rates of each converted pair, which the month rule
-- and fx_month's mean read), kube-state-metrics request files with samples in it (they split a
-- time-sliced GPU between pods), Slurm files with a job piece in it, dcgmi job statistics of
-- its jobs measured that way, FOCUS contract commitments whose periods reach a month with
-- charges, and provider carbon exports for it. Disclosures feed the audit of a published model,
-- not a month, and are not listed.
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

fx_read as (
    select a.month, r.file_id, r.via_file_id
    from int_fx_applied a
    join int_fx_rates r on r.from_currency = a.from_currency and r.to_currency = a.reporting_currency
        and (r.rate_date = a.rate_date or r.rate_month = a.month)
    where a.from_currency <> a.reporting_currency
),

rates as (
    select distinct month, file_id, 'rates' as role from fx_read
    union
    select distinct month, via_file_id, 'rates' as role from fx_read where via_file_id is not null
),

requests as (
    select distinct strftime(hour_start, '%Y-%m') as month, file_id, 'requests' as role from gpu_request_parts
),

cluster_jobs as (
    select distinct month, file_id, 'jobs' as role from int_cluster_jobs
),

job_stats as (
    -- int_cluster_job_energy reads every statistics row of a job it measures this way
    select distinct e.month, s.file_id, 'job_stats' as role
    from int_cluster_job_energy e
    join int_cluster_jobs j on j.cluster || ':job:' || j.job_id = e.resource_id and j.month = e.month
    join dcgm_job_stats s on s.job_id = j.job_id
    where e.tier = 'dcgm_job_stats'
),

commitments as (
    select distinct strftime(t.m, '%Y-%m') as month, c.file_id, 'commitments' as role
    from contract_commitments c,
         unnest(generate_series(date_trunc('month', c.period_start), c.period_end - interval 1 second, interval 1 month)) t (m)
    semi join billing b on b.month = strftime(t.m, '%Y-%m')
),

provider as (
    select distinct usage_month as month, file_id, 'provider_carbon' as role from provider_carbon
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
    union all
    select * from rates
    union all
    select * from requests
    union all
    select * from cluster_jobs
    union all
    select * from job_stats
    union all
    select * from commitments
    union all
    select * from provider
)

select f.month, f.file_id, f.role, s.sha256
from files f
join source_files s using (file_id)
where s.status = 'loaded'
-- a file read two ways (a sacct file: its jobs, and the cost pool's lines it dates) is listed once
qualify row_number() over (partition by f.month, f.file_id order by f.role) = 1
