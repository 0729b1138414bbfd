-- Grain: month x finding x subject, in the shape of findings_month (which unions it in): how well
-- the jobs used the GPUs they ran on.
--   low_mfu             a training job of the work log (job_month) whose MFU is below
--                       findings_low_mfu_threshold: value/low/high = its MFU and range; cost_usd
--                       = the money at stake, its GPU cost x (1 - MFU / mfu_typical), what reaching
--                       a typical large run's MFU would have saved (range in the detail). GPU cost:
--                       what it cost on the resources it ran on; its share of the team's other
--                       spend (storage, shared services) does not shrink with fewer GPU-hours
--   scaling_efficiency  value = E(K) at the GPU count used; detail has K* (int_scaling_fits)
with job_mfu as (
    -- a job's MFU over all its rows of the month (teams, currencies): work over GPU-seconds at peak
    select month, job_id, mode_det(list(team)) as team, sum(effective_cost - effective_cost_other) as cost,
        osum(work_flops) / nullif(osum(available_flop), 0) as mfu,
        osum(work_flops) / nullif(osum(available_flop_high), 0) as mfu_low,
        osum(work_flops) / nullif(osum(available_flop_low), 0) as mfu_high,
        max(tensor_active_mean) as tensor_active_mean, dsum(gpu_hours) as gpu_hours, string_agg(distinct gpu_models, ', ' order by gpu_models) as gpu_models
    from job_month
    where workload = 'training' and work_flops is not null and available_flop > 0
    group by all
),

thr as (
    select
        (select value from int_findings_params where assumption_id = 'findings_low_mfu_threshold') as low_mfu,
        typical.value as typ, typical.low as typ_low, typical.high as typ_high
    from int_findings_params typical where typical.assumption_id = 'mfu_typical'
)

select j.month, 'low_mfu' as finding, j.job_id as subject, null::varchar as resource_id, j.team,
    j.mfu as value, 'fraction' as unit, j.mfu_low as low, j.mfu_high as high,
    j.cost * greatest(0, 1 - j.mfu / c.typ) as cost_usd, null::double as energy_kwh,
    printf('MFU %.1f%% on %.0f GPU-hours of %s (threshold %.0f%%%s); at a typical large run''s %.0f%%, %.0f of its %.0f GPU cost would have been saved (%.0f-%.0f)',
           100 * j.mfu, j.gpu_hours, coalesce(j.gpu_models, 'unknown GPUs'), 100 * c.low_mfu,
           coalesce(printf('; DCGM tensor-pipe activity %.0f%%', 100 * j.tensor_active_mean), ''),
           100 * c.typ, j.cost * greatest(0, 1 - j.mfu / c.typ), j.cost,
           j.cost * greatest(0, 1 - j.mfu / c.typ_low), j.cost * greatest(0, 1 - j.mfu / c.typ_high)) as detail,
    ['assumptions:findings_low_mfu_threshold', 'assumptions:mfu_typical'] as assumption_ids
from job_mfu j
cross join thr c
where j.mfu < c.low_mfu
union all
select month, 'scaling_efficiency', project, null, null,
    efficiency_at_used, 'fraction', null, null, cost_at_used_usd - cost_at_opt_usd, null,
    printf('%s at GPU counts %s: serial fraction %.3f, communication %.4f per GPU; E(%d) = %.2f; cost-optimal K* = %s (range %s-%s) vs %d used',
           project, gpu_counts, serial_fraction, comm_fraction, k_used, efficiency_at_used,
           coalesce(k_opt::varchar, 'n/a'), coalesce(k_opt_low::varchar, 'n/a'), coalesce(k_opt_high::varchar, 'n/a'), k_used),
    ['assumptions:wallclock_value_usd_per_h']
from int_scaling_fits
