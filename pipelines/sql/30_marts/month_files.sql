-- Grain: month x file_id. The loaded files a month's figures rest on: billing files with charges
-- in the month, telemetry files with GPU-hours in it, CodeCarbon files with runs ending in it,
-- invoices files with an invoice for it (the reconciliation rests on them).
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

invoiced as (
    select distinct period as month, file_id, 'invoices' as role from invoices
),

files as (
    select * from billing
    union all
    select * from telemetry
    union all
    select * from runs
    union all
    select * from invoiced
)

select f.month, f.file_id, f.role, s.sha256
from files f
join source_files s using (file_id)
where s.status = 'loaded'
