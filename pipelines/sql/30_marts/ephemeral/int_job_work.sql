-- Grain: month x job x team. A job's work in the month (int_job_windows: tokens, samples,
-- requests; work_flops = flops_per_param_token x active parameters x tokens, logged_flops the same
-- from its own throughput log) and the share of it each of its teams takes: by GPU-hours
-- (int_job_gpu_time), summed as decimals, in any order the same; a job no GPU time was found for
-- is one row, on the unallocated team. Ephemeral: inlined into the models that read it.
with work as (
    select month, job_id, mode_det(list(workload)) as workload, max(params) as params, max(active_params) as active_params,
        string_agg(distinct precision, ', ' order by precision) as precision,
        dsum(tokens) as tokens, dsum(samples) as samples, dsum(requests) as requests,
        osum(flops_per_param_token * flops_params * tokens) as work_flops,
        osum(flops_per_param_token * flops_params * logged_tokens) as logged_flops,
        list_sort(list_distinct(list(flops_id))) as flops_ids
    from int_job_windows
    group by all
)

select w.*, coalesce(o.team, getvariable('unallocated')) as team,
    coalesce(o.gpu_hours / nullif(sum(o.gpu_hours::decimal(38, 12)) over (partition by w.month, w.job_id), 0)::double,
             1.0 / count(*) over (partition by w.month, w.job_id)) as work_share
from work w
left join int_job_gpu_time o using (month, job_id)
