-- Grain: month x job. What a model's disclosure needs about one job of the work log in one month
-- (AI Act Annex XI 2(d)-(e), SPDX 3 AI energyConsumption, CycloneDX modelCard energy, SCI):
-- the job_month figures summed over its teams and currencies (energy and CO2e sit on one
-- currency row, so nothing is counted twice), its wall-clock window from the work log, and the
-- embodied CO2e of the GPUs it held, amortized over their life (SCI's M):
--   embodied_co2e_kg = GPU-hours x embodied kg per accelerator / (lifetime years x hours a year),
--   embodied kg per accelerator = the GPU's + the host server's / accelerators per server,
-- per GPU model (ref_embodied; gpu_embodied_kgco2e_unknown where the model is not in it; the
-- host the 8-gpu-hgx-server row, shared by accelerators_per_server): the quantity the audit's
-- reconstruct engine amortizes for the same GPU-hours (pipelines.reconstruct.graph
-- embodied_per_accelerator, estimators.embodied_kg_per_accelerator), so a job's M, its forms'
-- embodied figures and the audit's agree. Low from the low GPU and host figures, the most
-- accelerators per server and the longest life; high the other way round (interval bounds, as
-- the audit's).
-- ownership, electricity_scope, embodied_scope: who owns the GPUs the job ran on and the GHG
-- scopes that puts its CO2e in (int_resource_ownership; ' + ' between two when it ran on both).
-- co2e_hourly_kg: the location-based CO2e at the hourly grid intensity where a series gives it for
-- the job's hours, else the annual factor (job_month), with facility_energy_kwh_hourly the energy an
-- hourly figure covered: SCI's O, never the annual average where the warehouse has the hours'.
-- pue: facility over IT energy (the PUE its energy was scaled by, weighted by energy); pue_low,
-- pue_high, pue_ids: the range and coefficient ids of the zones' PUEs (int_zone_factors).
-- energy_provider: the provider that bills the GPUs when they are rented or colocated, which
-- supplies their electricity; null for owned rooms (no input names the utility) or several providers.
-- energy_tier: measured (DCGM energy on every GPU-hour), estimated (billed hours or estimated
-- energy in it), uncovered (no GPU time found).
with jobs as (
    select month, job_id,
        mode_det(list(workload)) as workload, max(params) as params, max(active_params) as active_params,
        string_agg(distinct precision, ', ' order by precision) as precision,
        string_agg(distinct gpu_models, ', ' order by gpu_models) as gpu_models,
        string_agg(distinct team, ', ' order by team) as teams,
        sum(gpus) as gpus, dsum(gpu_hours) as gpu_hours, dsum(gpu_hours_estimated) as gpu_hours_estimated,
        dsum(tokens) as tokens, dsum(requests) as requests, dsum(samples) as samples,
        osum(work_flops) as work_flops,   -- 1e19 FLOPs lose digits cast to decimal(38, 12): doubles, summed in order
        dsum(it_energy_kwh) as it_energy_kwh, dsum(it_energy_kwh_measured) as it_energy_kwh_measured,
        dsum(facility_energy_kwh) as facility_energy_kwh,
        dsum(facility_energy_kwh_low) as facility_energy_kwh_low,
        dsum(facility_energy_kwh_high) as facility_energy_kwh_high,
        dsum(co2e_kg) as co2e_kg, dsum(co2e_kg_low) as co2e_kg_low, dsum(co2e_kg_high) as co2e_kg_high,
        dsum(co2e_market_kg) as co2e_market_kg,
        dsum(co2e_hourly_kg) as co2e_hourly_kg, dsum(co2e_hourly_kg_low) as co2e_hourly_kg_low,
        dsum(co2e_hourly_kg_high) as co2e_hourly_kg_high, dsum(facility_energy_kwh_hourly) as facility_energy_kwh_hourly,
        case when bool_and(status = 'uncovered') then 'uncovered'
             when bool_or(status = 'estimated') then 'estimated' else 'measured' end as energy_tier,
        list_sort(list_distinct(flatten(list(assumption_ids)))) as assumption_ids
    from job_month
    group by all
),

windows as (
    select month, job_id, min(piece_start) as start_utc, max(piece_end) as end_utc, sum(piece_s) as wall_clock_s
    from int_job_windows
    group by all
),

life as (
    select value as years, low as years_low, high as years_high, coefficient_id as lifetime_id
    from ref_assumptions where assumption_id = 'hardware_lifetime_years'
),

unknown_gpu as (
    select value, low, high, coefficient_id from ref_assumptions where assumption_id = 'gpu_embodied_kgco2e_unknown'
),

host as (
    -- the host server's embodied kg per accelerator it carries (the audit's host share)
    select h.value / n.value as value, h.low / n.high as low, h.high / n.low as high,
        [h.coefficient_id, n.coefficient_id] as ids
    from ref_embodied h
    cross join (select value, low, high, coefficient_id from ref_assumptions where assumption_id = 'accelerators_per_server') n
    where h.kind = 'server' and h.item = '8-gpu-hgx-server'
),

per_accelerator as (
    select c.month, c.job_id, c.gpu_hours,
        coalesce(e.value, u.value) + h.value as kg, coalesce(e.low, u.low) + h.low as kg_low,
        coalesce(e.high, u.high) + h.high as kg_high,
        list_concat([coalesce(e.coefficient_id, u.coefficient_id)], h.ids) as ids
    from int_job_claims c
    cross join unknown_gpu u
    cross join host h
    left join ref_embodied e on e.kind = 'gpu' and e.item = c.gpu_model
),

embodied as (
    select p.month, p.job_id,
        dsum(p.gpu_hours * p.kg / (l.years * getvariable('h_per_year'))) as embodied_co2e_kg,
        dsum(p.gpu_hours * p.kg_low / (l.years_high * getvariable('h_per_year'))) as embodied_co2e_kg_low,
        dsum(p.gpu_hours * p.kg_high / (l.years_low * getvariable('h_per_year'))) as embodied_co2e_kg_high,
        list_sort(list_distinct(list_concat(flatten(list(p.ids)), [pick(l.lifetime_id)]))) as embodied_ids
    from per_accelerator p
    cross join life l
    group by all
),

job_ids as (
    select distinct month, job_id, id from (select month, job_id, unnest(assumption_ids) as id from jobs) i
),

pue as (
    -- the PUE of each zone the job's energy was booked in (int_zone_factors): an assumption, as
    -- no meter reads the data centre's overhead
    select i.month, i.job_id, min(z.pue_low) as pue_low, max(z.pue_high) as pue_high,
        list_sort(list_distinct(list(z.pue_id))) as pue_ids
    from job_ids i
    join (select distinct pue_id, pue_low, pue_high from int_zone_factors) z on z.pue_id = i.id
    group by all
),

scopes as (
    select c.month, c.job_id,
        string_agg(distinct o.ownership, ', ' order by o.ownership) as ownership,
        string_agg(distinct o.electricity_scope, ' + ' order by o.electricity_scope) as electricity_scope,
        string_agg(distinct o.embodied_scope, ' + ' order by o.embodied_scope) as embodied_scope,
        -- who supplies the electricity: the provider that bills rented or colocated GPUs (its
        -- price includes their power); an owned room's utility no input names, nor one of two
        case when count(distinct o.provider) = 1
                  and bool_and(o.provider is not null and o.provider <> 'owned' and o.ownership in ('cloud', 'colocation'))
             then max(o.provider) end as energy_provider
    from int_job_claims c
    join int_resource_ownership o on o.month = c.month and coalesce(o.resource_id, '') = coalesce(c.resource_id, '')
    group by all
)

select
    j.* exclude (assumption_ids),
    s.ownership, s.electricity_scope, s.embodied_scope, s.energy_provider,
    j.facility_energy_kwh / nullif(j.it_energy_kwh, 0) as pue, p.pue_low, p.pue_high, coalesce(p.pue_ids, []) as pue_ids,
    w.start_utc, w.end_utc, w.wall_clock_s / getvariable('s_per_h') as wall_clock_h,
    coalesce(e.embodied_co2e_kg, 0) as embodied_co2e_kg,
    coalesce(e.embodied_co2e_kg_low, 0) as embodied_co2e_kg_low,
    coalesce(e.embodied_co2e_kg_high, 0) as embodied_co2e_kg_high,
    list_sort(list_distinct(list_concat(j.assumption_ids, coalesce(e.embodied_ids, [])))) as assumption_ids
from jobs j
left join windows w using (month, job_id)
left join embodied e using (month, job_id)
left join scopes s using (month, job_id)
left join pue p using (month, job_id)
