-- Grain: month x owned cluster x (Slurm job | idle). An owned cluster's cost pool (int_cost_pool)
-- as charge lines, so the chargeback allocates, reconciles and reports it as it does a bill:
-- each job its GPU-hours' share of the pool (GPU-hours / capacity; / the jobs' GPU-hours where
-- they exceed the capacity), its Slurm account as the sub account (teams through
-- [teams.accounts], an unmapped account untagged); the rest of the pool is the idle line
-- (line_item_type IdleCapacity), shared by the [allocation] idle rule. Each job's share is
-- rounded to the cent and the idle line is the pool less the jobs' shares, so the lines add up
-- to the pool to the cent, whatever the teams. invoice_id names the pool, the reference the
-- reconciliation holds them to. resource_id: <cluster>:job:<job id>, or <cluster>:idle.
with pool as (
    select *, strptime(month, '%Y-%m') as month_start, pool_usd::decimal(38, 12) as pool_dec,
        greatest(capacity_gpu_hours, used_gpu_hours) as share_basis_h
    from int_cost_pool
),

jobs as (
    select j.*, p.gpu_model, p.pool_dec,
        -- scaled, rounded, scaled back: Spark's round() takes its places only as a constant
        (round(p.pool_usd * j.gpu_hours / nullif(p.share_basis_h, 0) * power(10, q.quantum_places))
         / power(10, q.quantum_places))::decimal(38, 12) as cost
    from int_cluster_jobs j
    join pool p using (cluster, month)
    cross join (select quantum_places from cfg_meters where meter = 'billed_cost') q
),

idle as (
    select p.cluster, p.month, p.month_start, p.gpu_model, p.idle_gpu_hours,
        pick(p.pool_dec) - coalesce(sum(j.cost), 0) as cost,
        -- its lineage: the accounting file its month's jobs came from (no row: the line is the
        -- month's capacity less theirs)
        coalesce(min(j.file_id), pick(s.file_id)) as file_id
    from pool p
    left join jobs j using (cluster, month)
    left join (select min(file_id) as file_id from slurm_jobs) s on true
    group by p.cluster, p.month, p.month_start, p.gpu_model, p.idle_gpu_hours
),

lines as (
    select file_id, row_number, cluster, month, month_start, account, gpu_model, gpus as gpu_count, gpu_hours, cost,
        piece_start, piece_end, 'JobUsage' as line_item_type, cluster || ':job:' || job_id as resource_id,
        printf('Slurm job %s of %s (%s) on %s', job_id, coalesce(user_name, 'an unnamed user'),
               coalesce(account, 'no account'), cluster) as charge_description
    from jobs
    union all
    select file_id, null, cluster, month, month_start, null, gpu_model, null, idle_gpu_hours, cost,
        month_start as capacity_start, month_start + interval 1 month, 'IdleCapacity', cluster || ':idle',
        printf('Idle capacity of %s: GPU-hours no job used', cluster)
    from idle
)

select
    file_id,
    row_number,
    -- a job across two months is a line in each: the month keeps the key unique
    (extract(year from month_start) * getvariable('months_per_year') + extract(month from month_start))::integer as charge_line,
    'owned' as provider,
    cluster as billing_account_id,
    account as sub_account_id,
    month_start as billing_period_start,
    piece_start as charge_period_start,
    piece_end as charge_period_end,
    'Usage' as charge_category,
    null::varchar as charge_class,
    charge_description,
    line_item_type,
    'Owned GPU cluster' as service_name,
    'AI and Machine Learning' as service_category,
    null::varchar as sku_id,
    -- each job, and the idle capacity, as a resource of its own: its GPU-hours' energy is estimated
    -- (int_energy_base) and follows its cost (the idle line's over the cluster's users)
    resource_id,
    null::varchar as instance_type,
    cluster as region,
    'Other' as pricing_category,
    null::varchar as commitment_discount_id,
    gpu_hours as consumed_quantity,
    'GPU-hours' as consumed_unit,
    cost as billed_cost,
    cost as effective_cost,
    cost as list_cost,
    'USD' as billing_currency,
    printf('cost pool %s %s', cluster, month) as invoice_id,
    null::map(varchar, varchar) as tags,
    gpu_model,
    gpu_count,
    gpu_hours,
    null::bigint as line_item_hash
from lines
