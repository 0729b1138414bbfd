-- Grain: one row per team and month. Money in the billing currency (exact decimals), GPU-hours
-- from the bill, observed GPU-hours and utilization from telemetry, energy and CO2e with ranges.
with cost as (
    select month, team, billing_currency as currency,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost,
        sum(list_cost) as list_cost,
        coalesce(sum(gpu_hours), 0) as gpu_hours,
        count(*) as charge_rows
    from int_charges_teams
    group by all
),

energy as (
    select month, team,
        sum(gpu_hours) filter (where basis = 'measured') as gpu_hours_observed,
        sum(gpu_hours) filter (where basis = 'measured' and is_idle) as idle_gpu_hours,
        sum(util_weighted) / nullif(sum(gpu_hours) filter (where basis = 'measured'), 0) as util_mean,
        sum(it_energy_kwh) as it_energy_kwh,
        sum(it_energy_kwh) filter (where basis = 'measured') as it_energy_kwh_measured,
        sum(facility_energy_kwh) as facility_energy_kwh,
        sum(facility_energy_kwh_low) as facility_energy_kwh_low,
        sum(facility_energy_kwh_high) as facility_energy_kwh_high,
        sum(co2e_kg) as co2e_kg,
        sum(co2e_kg_low) as co2e_kg_low,
        sum(co2e_kg_high) as co2e_kg_high,
        list_sort(list_distinct(flatten(list(all_assumption_ids)))) as assumption_ids
    from int_energy_lines
    group by all
)

select
    coalesce(c.month, e.month) as month,
    coalesce(c.team, e.team) as team,
    c.currency,
    coalesce(c.billed_cost, 0) as billed_cost,
    coalesce(c.effective_cost, 0) as effective_cost,
    coalesce(c.list_cost, 0) as list_cost,
    coalesce(c.gpu_hours, 0) as gpu_hours,
    coalesce(e.gpu_hours_observed, 0) as gpu_hours_observed,
    coalesce(e.idle_gpu_hours, 0) as idle_gpu_hours,
    e.util_mean,
    coalesce(e.it_energy_kwh, 0) as it_energy_kwh,
    coalesce(e.it_energy_kwh_measured, 0) as it_energy_kwh_measured,
    coalesce(e.facility_energy_kwh, 0) as facility_energy_kwh,
    coalesce(e.facility_energy_kwh_low, 0) as facility_energy_kwh_low,
    coalesce(e.facility_energy_kwh_high, 0) as facility_energy_kwh_high,
    coalesce(e.co2e_kg, 0) as co2e_kg,
    coalesce(e.co2e_kg_low, 0) as co2e_kg_low,
    coalesce(e.co2e_kg_high, 0) as co2e_kg_high,
    coalesce(e.assumption_ids, []) as assumption_ids
from cost c
full outer join energy e on e.month = c.month and e.team = c.team
