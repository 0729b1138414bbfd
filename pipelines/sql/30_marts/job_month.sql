-- Grain: month x job x team x currency. What each job of the work log cost, drew and emitted,
-- per unit of work. A job is one row per month and team it ran under (a job on two teams' GPUs,
-- or across a month boundary, is split without counting anything twice: each GPU-hour is
-- claimed once, int_job_claims); currency as team_month (energy and CO2e on the first one).
-- Cost, energy and CO2e are shares of the team's allocation (int_job_allocated shares its
-- allocation_lines out by the job's GPU-hours): jobs that cover a team's GPU time add up to its
-- team_month cost, and to its energy, CO2e and billed GPU-hours on the resources they ran on
-- (a resource no job ran on keeps those with the team). GPU time: int_job_gpu_time. Work: tokens/samples/requests of the
-- month, split between a job's teams by its GPU-hours (int_job_work); MFU = work_flops /
-- available_flop (GPU-seconds x dense peak for the job's precision); its range follows the
-- peak's. mfu_logged: the same from the job's own throughput log. tensor_active_mean: DCGM's
-- tensor-pipe activity over the job's GPU-hours, an independent view. Per unit: per million
-- tokens, per thousand requests and samples (Variables: tokens_per_million, units_per_thousand).
-- effective_cost_idle: the part from idle GPU time (idle rules); effective_cost_other: the part
-- from the team's amounts on no resource the job ran on (shared services, storage, credits).
-- co2e_hourly_kg: location-based CO2e hour by hour where a grid-hourly series gives the hour, else at the
-- annual factor (int_energy_base); facility_energy_kwh_hourly the energy a series covered. SCI's O.
-- status: measured, estimated (billed GPU-hours or estimated energy in it), uncovered (no GPU time found).
with money_by_currency as (
    select month, job_id, team, currency,
        sum((amount)::decimal(38, 12)) filter (where meter = 'billed_cost')::double as billed_cost,
        sum((amount)::decimal(38, 12)) filter (where meter = 'effective_cost')::double as effective_cost,
        sum((amount)::decimal(38, 12)) filter (where meter = 'effective_cost' and rule like 'idle:%')::double as effective_cost_idle,
        sum((amount)::decimal(38, 12)) filter (where meter = 'effective_cost' and not on_resource)::double as effective_cost_other,
        sum((amount)::decimal(38, 12)) filter (where meter = 'gpu_hours')::double as gpu_hours_billed
    from int_job_allocated where currency is not null
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
        sum((amount)::decimal(38, 12)) filter (where meter = 'co2e_hourly_kg')::double as co2e_hourly_kg,
        sum((amount)::decimal(38, 12)) filter (where meter = 'co2e_hourly_kg_low')::double as co2e_hourly_kg_low,
        sum((amount)::decimal(38, 12)) filter (where meter = 'co2e_hourly_kg_high')::double as co2e_hourly_kg_high,
        sum((amount)::decimal(38, 12)) filter (where meter = 'facility_energy_kwh_hourly')::double as facility_energy_kwh_hourly,
        sum((amount)::decimal(38, 12)) filter (where meter = 'facility_energy_kwh' and split_part(source_group, '|', 2) = 'estimated')::double
            as facility_energy_kwh_estimated,
        list_sort(list_distinct(list(source_group))) as source_groups
    from int_job_allocated where currency is null
    group by all
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
        coalesce(e.co2e_hourly_kg, 0) as co2e_hourly_kg, coalesce(e.co2e_hourly_kg_low, 0) as co2e_hourly_kg_low,
        coalesce(e.co2e_hourly_kg_high, 0) as co2e_hourly_kg_high, coalesce(e.facility_energy_kwh_hourly, 0) as facility_energy_kwh_hourly,
        coalesce(e.facility_energy_kwh_estimated, 0) as facility_energy_kwh_estimated,
        case when o.gpu_hours is null or o.gpu_hours = 0 then 'uncovered'
             when o.gpu_hours_estimated > 0 or e.facility_energy_kwh_estimated > 0 then 'estimated'
             else 'measured' end as status,
        list_sort(list_distinct(list_concat(s.flops_ids, coalesce(o.peak_ids, []), coalesce(i.energy_ids, [])))) as assumption_ids
    from int_job_work s
    left join int_job_gpu_time o using (month, job_id, team)
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
        0.0 as co2e_hourly_kg, 0.0 as co2e_hourly_kg_low, 0.0 as co2e_hourly_kg_high, 0.0 as facility_energy_kwh_hourly,
        0.0 as facility_energy_kwh_estimated, 'measured' as status, []::varchar[] as assumption_ids
    from money m join int_job_work s using (month, job_id, team)
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
