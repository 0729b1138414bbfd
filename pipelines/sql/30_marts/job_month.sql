-- Grain: month x job x team x currency. What each job of the work log cost, drew and emitted,
-- per unit of work. A job is one row per month and team it ran under (a job on two teams' GPUs,
-- or across a month boundary, is split without counting anything twice: each GPU-hour is
-- claimed once, int_job_claims); currency as team_month (energy and CO2e on the first one).
-- Cost, energy and CO2e are shares of the team's allocation (allocation_lines), so jobs that
-- cover a team's GPU time add up to its team_month figures:
--   on a billed resource, the team's amounts there (its own use, its idle share, unobserved
--   hours, energy) in proportion to the job's GPU-hours over the team's there (busy telemetry
--   hours, plus idle hours its jobs claimed; billed GPU-hours where the resource has no telemetry);
--   the team's other amounts (shared services, credits, resources it has no hours on) in
--   proportion to the job's GPU-hours over all of the team's in the month.
-- Work: tokens/samples/requests of the month (int_job_windows), split between a job's teams by
-- its GPU-hours. work_flops = flops_per_param_token x active parameters x tokens; MFU =
-- work_flops / (GPU-seconds x dense peak for the job's precision); its range follows the peak's.
-- mfu_logged: the same from the job's own throughput log. tensor_active_mean: DCGM's tensor-pipe
-- activity over the job's GPU-hours, an independent view. Per unit: per million tokens, per
-- thousand requests and samples (Variables: tokens_per_million, units_per_thousand).
-- effective_cost_idle: the part from idle GPU time (idle rules); effective_cost_other: the part
-- from the team's amounts on no resource the job ran on (shared services, storage, credits).
-- status: measured, estimated (billed GPU-hours or estimated energy in it), uncovered (no GPU time found).
with claims as (
    select * from int_job_claims
),

job_hours as (
    select month, job_id, team, resource_id, dsum(gpu_hours) as h from claims group by all
),

observed_resources as (
    select distinct strftime(hour_start, '%Y-%m') as month, resource_id from int_gpu_workloads
),

basis as (
    -- the hours a team's amounts on a resource are shared by
    select month, team, resource_id, dsum(h) as basis_h
    from (
        select strftime(hour_start, '%Y-%m') as month, coalesce(team, getvariable('unallocated')) as team, resource_id,
            gpu_hours_observed as h
        from int_gpu_workloads where not is_idle
        union all
        select month, team, resource_id, gpu_hours from claims where basis = 'telemetry' and is_idle
        union all
        select l.month, l.team, l.resource_id, l.amount::double
        from allocation_lines l anti join observed_resources r on r.month = l.month and r.resource_id = l.resource_id
        where l.meter = 'gpu_hours' and l.resource_id is not null
    )
    group by all
    having dsum(h) > 0
),

shares as (
    -- on a resource: job / team hours there; pooled: job / team hours in the month
    select j.month, j.job_id, j.team, j.resource_id, j.h / b.basis_h as share
    from job_hours j join basis b on b.month = j.month and b.team = j.team and b.resource_id = j.resource_id
    union all
    select j.month, j.job_id, j.team, null, sum(j.h) / pick(t.total_h)
    from job_hours j
    join (select month, team, sum(basis_h) as total_h from basis group by all) t using (month, team)
    group by all
),

lines as (
    select l.*, l.resource_id is not null and b.basis_h is not null as on_resource
    from allocation_lines l
    left join basis b on b.month = l.month and b.team = l.team and b.resource_id = l.resource_id
    where l.month in (select month from job_hours)
),

allocated as (
    select s.month, s.job_id, s.team, l.currency, l.meter, l.rule, l.source_group, l.on_resource,
        l.amount::double * s.share as amount
    from shares s
    join lines l on l.month = s.month and l.team = s.team
        and ((s.resource_id is not null and l.on_resource and l.resource_id = s.resource_id)
             or (s.resource_id is null and not l.on_resource))
),

money_by_currency as (
    select month, job_id, team, currency,
        sum((amount)::decimal(38, 12)) filter (where meter = 'billed_cost')::double as billed_cost,
        sum((amount)::decimal(38, 12)) filter (where meter = 'effective_cost')::double as effective_cost,
        sum((amount)::decimal(38, 12)) filter (where meter = 'effective_cost' and rule like 'idle:%')::double as effective_cost_idle,
        sum((amount)::decimal(38, 12)) filter (where meter = 'effective_cost' and not on_resource)::double as effective_cost_other,
        sum((amount)::decimal(38, 12)) filter (where meter = 'gpu_hours')::double as gpu_hours_billed
    from allocated where currency is not null
    group by all
),

money as (
    -- a team billed in several currencies: the job's work, hours and energy go on the first
    select *, row_number() over (partition by month, job_id, team order by currency) as currency_rank
    from money_by_currency
),

energy as (
    select month, job_id, team,
        sum((amount)::decimal(38, 12)) filter (where meter = 'it_energy_kwh')::double as it_energy_kwh,
        sum((amount)::decimal(38, 12)) filter (where meter = 'facility_energy_kwh')::double as facility_energy_kwh,
        sum((amount)::decimal(38, 12)) filter (where meter = 'facility_energy_kwh_low')::double as facility_energy_kwh_low,
        sum((amount)::decimal(38, 12)) filter (where meter = 'facility_energy_kwh_high')::double as facility_energy_kwh_high,
        sum((amount)::decimal(38, 12)) filter (where meter = 'co2e_kg')::double as co2e_kg,
        sum((amount)::decimal(38, 12)) filter (where meter = 'co2e_kg_low')::double as co2e_kg_low,
        sum((amount)::decimal(38, 12)) filter (where meter = 'co2e_kg_high')::double as co2e_kg_high,
        sum((amount)::decimal(38, 12)) filter (where meter = 'co2e_market_kg')::double as co2e_market_kg,
        sum((amount)::decimal(38, 12)) filter (where meter = 'facility_energy_kwh' and split_part(source_group, '|', 2) = 'estimated')::double
            as facility_energy_kwh_estimated,
        list_sort(list_distinct(list(source_group))) as source_groups
    from allocated where currency is null
    group by all
),

own as (
    select month, job_id, team,
        dsum(gpu_hours) as gpu_hours,
        coalesce(sum((gpu_hours)::decimal(38, 12)) filter (where basis = 'billed')::double, 0) as gpu_hours_estimated,
        count(distinct gpu_uuid) as gpus,
        dsum(it_energy_kwh) as it_energy_kwh_measured,
        dsum(gpu_hours * getvariable('s_per_h') * peak_flops) as peak_flop,
        dsum(gpu_hours * getvariable('s_per_h') * peak_flops_low) as peak_flop_low,
        dsum(gpu_hours * getvariable('s_per_h') * peak_flops_high) as peak_flop_high,
        bool_or(peak_flops is null and gpu_hours > 0) as peak_unknown,
        dsum(gpu_hours * tensor_active_mean) / nullif(sum((gpu_hours)::decimal(38, 12)) filter (where tensor_active_mean is not null)::double, 0) as tensor_active_mean,
        dsum(gpu_hours * util_mean) / nullif(sum((gpu_hours)::decimal(38, 12)) filter (where util_mean is not null)::double, 0) as util_mean,
        string_agg(distinct gpu_model, ', ' order by gpu_model) as gpu_models,
        list_sort(list_distinct(list(peak_id) filter (where peak_id is not null))) as peak_ids
    from claims
    group by all
),

work as (
    select month, job_id, mode_det(list(workload)) as workload, max(params) as params, max(active_params) as active_params,
        string_agg(distinct precision, ', ' order by precision) as precision,
        dsum(tokens) as tokens, dsum(samples) as samples, dsum(requests) as requests,
        osum(flops_per_param_token * flops_params * tokens) as work_flops,
        osum(flops_per_param_token * flops_params * logged_tokens) as logged_flops,
        list_sort(list_distinct(list(flops_id))) as flops_ids
    from int_job_windows
    group by all
),

split as (
    -- a job's work goes to its teams by GPU-hours (summed as decimals, in any order the same);
    -- a job no GPU time was found for is one row
    select w.*, coalesce(o.team, getvariable('unallocated')) as team,
        coalesce(o.gpu_hours / nullif(sum(o.gpu_hours::decimal(38, 12)) over (partition by w.month, w.job_id), 0)::double,
                 1.0 / count(*) over (partition by w.month, w.job_id)) as work_share
    from work w
    left join own o using (month, job_id)
),

ids as (
    select e.month, e.job_id, e.team, list_sort(list_distinct(flatten(list(l.all_assumption_ids)))) as energy_ids
    from (select month, job_id, team, unnest(source_groups) as source_group from energy) e
    join int_energy_lines l using (month, source_group)
    group by all
),

joined as (
    select
        s.month, s.job_id, s.team, m.currency, s.workload, s.params, s.active_params, s.precision, o.gpu_models,
        coalesce(o.gpus, 0) as gpus,
        coalesce(o.gpu_hours, 0) as gpu_hours,
        coalesce(o.gpu_hours_estimated, 0) as gpu_hours_estimated,
        coalesce(m.gpu_hours_billed, 0) as gpu_hours_billed,
        s.tokens * s.work_share as tokens,
        s.samples * s.work_share as samples,
        s.requests * s.work_share as requests,
        s.work_flops * s.work_share as work_flops,
        s.work_flops * s.work_share / nullif(o.peak_flop, 0) as mfu,
        s.work_flops * s.work_share / nullif(o.peak_flop_high, 0) as mfu_low,
        s.work_flops * s.work_share / nullif(o.peak_flop_low, 0) as mfu_high,
        s.logged_flops * s.work_share / nullif(o.peak_flop, 0) as mfu_logged,
        o.peak_flop as available_flop,
        o.peak_flop_low as available_flop_low,
        o.peak_flop_high as available_flop_high,
        o.tensor_active_mean,
        o.util_mean,
        coalesce(m.billed_cost, 0) as billed_cost,
        coalesce(m.effective_cost, 0) as effective_cost,
        coalesce(m.effective_cost_idle, 0) as effective_cost_idle,
        coalesce(m.effective_cost_other, 0) as effective_cost_other,
        o.it_energy_kwh_measured,
        coalesce(e.it_energy_kwh, 0) as it_energy_kwh,
        coalesce(e.facility_energy_kwh, 0) as facility_energy_kwh,
        coalesce(e.facility_energy_kwh_low, 0) as facility_energy_kwh_low,
        coalesce(e.facility_energy_kwh_high, 0) as facility_energy_kwh_high,
        coalesce(e.co2e_kg, 0) as co2e_kg,
        coalesce(e.co2e_kg_low, 0) as co2e_kg_low,
        coalesce(e.co2e_kg_high, 0) as co2e_kg_high,
        e.co2e_market_kg,
        coalesce(e.facility_energy_kwh_estimated, 0) as facility_energy_kwh_estimated,
        case when o.gpu_hours is null or o.gpu_hours = 0 then 'uncovered'
             when o.gpu_hours_estimated > 0 or e.facility_energy_kwh_estimated > 0 then 'estimated'
             else 'measured' end as status,
        list_sort(list_distinct(list_concat(s.flops_ids, coalesce(o.peak_ids, []), coalesce(i.energy_ids, [])))) as assumption_ids
    from split s
    left join own o using (month, job_id, team)
    left join money m on m.month = s.month and m.job_id = s.job_id and m.team = s.team and m.currency_rank = 1
    left join energy e on e.month = s.month and e.job_id = s.job_id and e.team = s.team
    left join ids i on i.month = s.month and i.job_id = s.job_id and i.team = s.team
),

all_rows as (
    select * from joined
    union all by name
    -- the money of a further currency, on a row of its own
    select m.month, m.job_id, m.team, m.currency, s.workload, s.params, s.active_params, s.precision,
        0 as gpus, 0.0 as gpu_hours, 0.0 as gpu_hours_estimated, m.gpu_hours_billed, m.billed_cost, m.effective_cost,
        m.effective_cost_idle, m.effective_cost_other, 0.0 as it_energy_kwh, 0.0 as facility_energy_kwh, 0.0 as facility_energy_kwh_low,
        0.0 as facility_energy_kwh_high, 0.0 as co2e_kg, 0.0 as co2e_kg_low, 0.0 as co2e_kg_high,
        0.0 as facility_energy_kwh_estimated, 'measured' as status, []::varchar[] as assumption_ids
    from money m join split s using (month, job_id, team)
    where m.currency_rank > 1
),

priced as (
    -- a job no GPU time was found for has no cost per unit (its zero cost is not a price)
    select *,
        case when status <> 'uncovered' then tokens end as priced_tokens,
        case when status <> 'uncovered' then requests end as priced_requests,
        case when status <> 'uncovered' then samples end as priced_samples
    from all_rows
)

select
    * exclude (priced_tokens, priced_requests, priced_samples),
    per_unit(effective_cost, priced_tokens, getvariable('tokens_per_million')) as cost_per_mtok,
    per_unit(facility_energy_kwh, priced_tokens, getvariable('tokens_per_million')) as kwh_per_mtok,
    per_unit(facility_energy_kwh_low, priced_tokens, getvariable('tokens_per_million')) as kwh_per_mtok_low,
    per_unit(facility_energy_kwh_high, priced_tokens, getvariable('tokens_per_million')) as kwh_per_mtok_high,
    per_unit(co2e_kg * getvariable('g_per_kg'), priced_tokens, getvariable('tokens_per_million')) as gco2e_per_mtok,
    per_unit(co2e_kg_low * getvariable('g_per_kg'), priced_tokens, getvariable('tokens_per_million')) as gco2e_per_mtok_low,
    per_unit(co2e_kg_high * getvariable('g_per_kg'), priced_tokens, getvariable('tokens_per_million')) as gco2e_per_mtok_high,
    per_unit(effective_cost, priced_requests, getvariable('units_per_thousand')) as cost_per_k_requests,
    per_unit(facility_energy_kwh, priced_requests, getvariable('units_per_thousand')) as kwh_per_k_requests,
    per_unit(co2e_kg * getvariable('g_per_kg'), priced_requests, getvariable('units_per_thousand')) as gco2e_per_k_requests,
    per_unit(effective_cost, priced_samples, getvariable('units_per_thousand')) as cost_per_k_samples,
    per_unit(facility_energy_kwh, priced_samples, getvariable('units_per_thousand')) as kwh_per_k_samples,
    per_unit(co2e_kg * getvariable('g_per_kg'), priced_samples, getvariable('units_per_thousand')) as gco2e_per_k_samples
from priced
