-- Grain: one row per team and month. team_month in the month's reporting currency: a team billed
-- in several currencies is one row, its money the sum of its team_currency_month conversions,
-- every other meter the sum of its team_month rows (energy and CO2e sit on one of them only).
-- currency = the reporting currency; billing_currencies lists what the team was billed in.
-- Money is null where a rate is missing (the chargeback stops on it with the currency and day).
with fx as (
    select month, team,
        pick(reporting_currency) as currency,
        list_sort(list(distinct currency)) as billing_currencies,
        bool_and(rated) as rated,
        sum(billed_cost_reporting) as billed_cost,
        sum(effective_cost_reporting) as effective_cost,
        sum(list_cost_reporting) as list_cost,
        sum(billed_cost_direct_reporting) as billed_cost_direct,
        sum(billed_cost_idle_reporting) as billed_cost_idle,
        sum(billed_cost_shared_reporting) as billed_cost_shared,
        sum(billed_cost_credits_reporting) as billed_cost_credits,
        sum(effective_cost_direct_reporting) as effective_cost_direct,
        sum(effective_cost_idle_reporting) as effective_cost_idle,
        sum(effective_cost_shared_reporting) as effective_cost_shared,
        sum(effective_cost_credits_reporting) as effective_cost_credits,
        sum(idle_cost_reporting) as idle_cost,
        sum(unallocated_capacity_cost_reporting) as unallocated_capacity_cost
    from team_currency_month
    group by month, team
),

meters as (
    select month, team,
        dsum(gpu_hours) as gpu_hours, dsum(gpu_hours_observed) as gpu_hours_observed,
        dsum(idle_gpu_hours) as idle_gpu_hours, dsum(unallocated_capacity_gpu_hours) as unallocated_capacity_gpu_hours,
        dsum(unallocated_capacity_gpu_hours_observed) as unallocated_capacity_gpu_hours_observed, dsum(it_energy_kwh) as it_energy_kwh,
        dsum(it_energy_kwh_measured) as it_energy_kwh_measured, dsum(facility_energy_kwh) as facility_energy_kwh,
        dsum(facility_energy_kwh_low) as facility_energy_kwh_low, dsum(facility_energy_kwh_high) as facility_energy_kwh_high,
        dsum(co2e_kg) as co2e_kg, dsum(co2e_kg_low) as co2e_kg_low, dsum(co2e_kg_high) as co2e_kg_high,
        list_sort(list_distinct(flatten(list(assumption_ids)))) as assumption_ids,
        dsum(effective_gpu_hours) as effective_gpu_hours,
        -- team_month's utilization, weighted by the hours it was measured on: null stays unknown
        -- (a GPU whose telemetry reports no activity, a MIG instance), never a 0 %
        (sum((gpu_hours_observed * util_mean)::decimal(38, 12)) filter (where util_mean is not null)
            / nullif(sum(gpu_hours_observed::decimal(38, 12)) filter (where util_mean is not null), 0))::double as util_mean,
        dsum(co2e_market_kg) as co2e_market_kg, dsum(co2e_market_kg_low) as co2e_market_kg_low,
        dsum(co2e_market_kg_high) as co2e_market_kg_high,
        dsum(co2e_hourly_kg) as co2e_hourly_kg, dsum(co2e_hourly_kg_low) as co2e_hourly_kg_low,
        dsum(co2e_hourly_kg_high) as co2e_hourly_kg_high,
        dsum(facility_energy_kwh_hourly) as facility_energy_kwh_hourly,
        dsum(facility_energy_kwh_market_na) as facility_energy_kwh_market_na
    from team_month
    group by month, team
),

joined as (
    select m.month, m.team, f.currency,
        coalesce(f.billed_cost, case when f.rated is null then 0 end) as billed_cost,
        coalesce(f.effective_cost, case when f.rated is null then 0 end) as effective_cost,
        coalesce(f.list_cost, case when f.rated is null then 0 end) as list_cost,
        m.gpu_hours, m.gpu_hours_observed, m.idle_gpu_hours, m.unallocated_capacity_gpu_hours, m.unallocated_capacity_gpu_hours_observed,
        m.util_mean,
        m.it_energy_kwh, m.it_energy_kwh_measured, m.facility_energy_kwh, m.facility_energy_kwh_low,
        m.facility_energy_kwh_high, m.co2e_kg, m.co2e_kg_low, m.co2e_kg_high, m.assumption_ids,
        coalesce(f.billed_cost_direct, case when f.rated is null then 0 end) as billed_cost_direct,
        coalesce(f.billed_cost_idle, case when f.rated is null then 0 end) as billed_cost_idle,
        coalesce(f.billed_cost_shared, case when f.rated is null then 0 end) as billed_cost_shared,
        coalesce(f.billed_cost_credits, case when f.rated is null then 0 end) as billed_cost_credits,
        coalesce(f.effective_cost_direct, case when f.rated is null then 0 end) as effective_cost_direct,
        coalesce(f.effective_cost_idle, case when f.rated is null then 0 end) as effective_cost_idle,
        coalesce(f.effective_cost_shared, case when f.rated is null then 0 end) as effective_cost_shared,
        coalesce(f.effective_cost_credits, case when f.rated is null then 0 end) as effective_cost_credits,
        coalesce(f.idle_cost, case when f.rated is null then 0 end) as idle_cost,
        coalesce(f.unallocated_capacity_cost, case when f.rated is null then 0 end) as unallocated_capacity_cost,
        m.effective_gpu_hours,
        f.effective_cost / nullif(m.effective_gpu_hours, 0) as cost_per_effective_gpu_hour,
        m.co2e_market_kg, m.co2e_market_kg_low, m.co2e_market_kg_high,
        m.co2e_hourly_kg, m.co2e_hourly_kg_low, m.co2e_hourly_kg_high,
        m.facility_energy_kwh_hourly, m.facility_energy_kwh_market_na,
        coalesce(f.billing_currencies, []) as billing_currencies
    from meters m
    left join fx f using (month, team)
)

select
    j.* exclude (j.billing_currencies),
    p.billed_cost as billed_cost_prev_month,
    j.billed_cost - p.billed_cost as billed_cost_change,
    j.effective_cost - p.effective_cost as effective_cost_change,
    j.facility_energy_kwh - p.facility_energy_kwh as facility_energy_kwh_change,
    j.billing_currencies
from joined j
left join joined p on p.team = j.team and p.currency is not distinct from j.currency
    and p.month = strftime(strptime(j.month, '%Y-%m') - interval 1 month, '%Y-%m')
