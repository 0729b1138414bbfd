-- Grain: month x team x workload (training | serving) x currency. A team's unit economics over
-- the jobs of its work log (job_month): GPU-hours, work, MFU over the jobs whose FLOPs are known
-- (their work FLOPs over their GPU-seconds at peak), cost, facility energy and CO2e per million
-- tokens (per thousand requests, samples) over the jobs that did those units.
-- busy_gpu_hours: the team's observed busy GPU-hours (workload_month), what its jobs could cover.
-- Money as billed (in `currency`) and, *_reporting, in the month's reporting currency
-- (job_month_reporting: its jobs at the bill's rate).
with jobs as (
    select * from job_month_reporting
),

busy as (
    select month, team, dsum(gpu_hours) as busy_gpu_hours from workload_month group by all
),

rolled as (
    select month, team, workload, currency,
        count(distinct job_id) as jobs,
        dsum(gpu_hours) as gpu_hours,
        dsum(gpu_hours_estimated) as gpu_hours_estimated,
        sum(tokens) as tokens,
        sum(samples) as samples,
        sum(requests) as requests,
        sum(work_flops) filter (where available_flop > 0) as work_flops,
        sum(available_flop) filter (where work_flops is not null) as available_flop,
        sum(available_flop_low) filter (where work_flops is not null) as available_flop_low,
        sum(available_flop_high) filter (where work_flops is not null) as available_flop_high,
        sum(effective_cost) as effective_cost,
        sum(effective_cost_reporting) as effective_cost_reporting,
        dsum(facility_energy_kwh) as facility_energy_kwh,
        dsum(co2e_kg) as co2e_kg,
        sum(effective_cost) filter (where tokens > 0) as cost_tok,
        sum(effective_cost_reporting) filter (where tokens > 0) as cost_tok_reporting,
        sum((facility_energy_kwh)::decimal(38, 12)) filter (where tokens > 0)::double as kwh_tok,
        sum((facility_energy_kwh_low)::decimal(38, 12)) filter (where tokens > 0)::double as kwh_tok_low,
        sum((facility_energy_kwh_high)::decimal(38, 12)) filter (where tokens > 0)::double as kwh_tok_high,
        sum((co2e_kg)::decimal(38, 12)) filter (where tokens > 0)::double as co2e_tok,
        sum((co2e_kg_low)::decimal(38, 12)) filter (where tokens > 0)::double as co2e_tok_low,
        sum((co2e_kg_high)::decimal(38, 12)) filter (where tokens > 0)::double as co2e_tok_high,
        sum(effective_cost) filter (where requests > 0) as cost_req,
        sum(effective_cost_reporting) filter (where requests > 0) as cost_req_reporting,
        sum((facility_energy_kwh)::decimal(38, 12)) filter (where requests > 0)::double as kwh_req,
        sum((co2e_kg)::decimal(38, 12)) filter (where requests > 0)::double as co2e_req,
        bool_or(status = 'estimated') as any_estimated
    from jobs
    group by all
)

select
    r.month, r.team, r.workload, r.currency, r.jobs, r.gpu_hours, r.gpu_hours_estimated, b.busy_gpu_hours,
    r.tokens, r.samples, r.requests, r.work_flops,
    r.work_flops / nullif(r.available_flop, 0) as mfu,
    r.work_flops / nullif(r.available_flop_high, 0) as mfu_low,
    r.work_flops / nullif(r.available_flop_low, 0) as mfu_high,
    r.effective_cost, r.effective_cost_reporting, r.facility_energy_kwh, r.co2e_kg,
    per_unit(r.cost_tok, r.tokens, getvariable('tokens_per_million')) as cost_per_mtok,
    per_unit(r.cost_tok_reporting, r.tokens, getvariable('tokens_per_million')) as cost_per_mtok_reporting,
    per_unit(r.kwh_tok, r.tokens, getvariable('tokens_per_million')) as kwh_per_mtok,
    per_unit(r.kwh_tok_low, r.tokens, getvariable('tokens_per_million')) as kwh_per_mtok_low,
    per_unit(r.kwh_tok_high, r.tokens, getvariable('tokens_per_million')) as kwh_per_mtok_high,
    per_unit(r.co2e_tok * getvariable('g_per_kg'), r.tokens, getvariable('tokens_per_million')) as gco2e_per_mtok,
    per_unit(r.co2e_tok_low * getvariable('g_per_kg'), r.tokens, getvariable('tokens_per_million')) as gco2e_per_mtok_low,
    per_unit(r.co2e_tok_high * getvariable('g_per_kg'), r.tokens, getvariable('tokens_per_million')) as gco2e_per_mtok_high,
    per_unit(r.cost_req, r.requests, getvariable('units_per_thousand')) as cost_per_k_requests,
    per_unit(r.cost_req_reporting, r.requests, getvariable('units_per_thousand')) as cost_per_k_requests_reporting,
    per_unit(r.kwh_req, r.requests, getvariable('units_per_thousand')) as kwh_per_k_requests,
    per_unit(r.co2e_req * getvariable('g_per_kg'), r.requests, getvariable('units_per_thousand')) as gco2e_per_k_requests,
    r.any_estimated
from rolled r
left join busy b using (month, team)
