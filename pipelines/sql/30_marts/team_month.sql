-- Grain: one row per team and month (and billing currency). Built from allocation_lines only,
-- so every meter of every team sums, with the unallocated row, to its source total. Money in
-- the billing currency (exact decimals); gpu_hours = billed GPU-hours as allocated;
-- gpu_hours_observed / idle_gpu_hours / effective_gpu_hours from telemetry; energy and CO2e
-- with ranges: location-based on annual factors (co2e_kg) and hour by hour (co2e_hourly_kg, with
-- facility_energy_kwh_hourly the energy an hourly factor covered), market-based (co2e_market_kg,
-- over the energy whose zone has a factor; facility_energy_kwh_market_na the rest).
-- Split columns: *_direct (own charges, telemetry split, unobserved hours, provider split),
-- *_idle (GPU time no work used: idle time and unallocated capacity), *_shared (untagged, shared
-- services, commitment fees), *_credits (credits and refunds). Previous-month change in the same currency.
-- Two kinds of GPU time no work used, each with its own name, its cost and its hours alike
-- (is_unallocated_capacity):
--   idle time: GPU time telemetry saw with no workload on a GPU billed to the team, shared by the
--     idle rule: idle_cost, idle_gpu_hours;
--   unallocated capacity: GPU capacity no work was given: a MIG GPU's slices no pod held and an
--     instance's unused split cost (rule unallocated_capacity, the unallocated team), an owned
--     cluster's GPU-hours no Slurm job held (its cost pool's IdleCapacity line, shared over the
--     cluster's users: owned_capacity:*): unallocated_capacity_cost, unallocated_capacity_gpu_hours
--     (billed or pooled), unallocated_capacity_gpu_hours_observed (the part telemetry saw, which
--     idle_gpu_hours does not count again). effective_cost_idle = idle_cost + unallocated_capacity_cost.
-- A team billed in several currencies has a row per currency; its energy and CO2e are on the
-- first one (by currency code), so the rows of a team add up.
-- Money stays DECIMAL (exact); GPU-hours, energy and CO2e are exact in allocation_lines and are
-- DOUBLE here, as the report's arithmetic expects.
with lines as (
    select *, charge_part(rule) as part, is_unallocated_capacity(rule) as is_capacity
    from allocation_lines
),

cost as (
    select month, team, currency,
        sum(amount) filter (where meter = 'billed_cost') as billed_cost,
        sum(amount) filter (where meter = 'effective_cost') as effective_cost,
        sum(amount) filter (where meter = 'list_cost') as list_cost,
        sum(amount) filter (where meter = 'gpu_hours')::double as gpu_hours,
        sum(amount) filter (where meter = 'gpu_hours' and is_capacity)::double as unallocated_capacity_gpu_hours,
        sum(amount) filter (where meter = 'billed_cost' and part = 'direct') as billed_cost_direct,
        sum(amount) filter (where meter = 'billed_cost' and part = 'idle') as billed_cost_idle,
        sum(amount) filter (where meter = 'billed_cost' and part = 'shared') as billed_cost_shared,
        sum(amount) filter (where meter = 'billed_cost' and part = 'credits') as billed_cost_credits,
        sum(amount) filter (where meter = 'effective_cost' and part = 'direct') as effective_cost_direct,
        sum(amount) filter (where meter = 'effective_cost' and part = 'idle') as effective_cost_idle,
        sum(amount) filter (where meter = 'effective_cost' and part = 'shared') as effective_cost_shared,
        sum(amount) filter (where meter = 'effective_cost' and part = 'credits') as effective_cost_credits,
        sum(amount) filter (where meter = 'effective_cost' and part = 'idle' and not is_capacity) as idle_cost,
        sum(amount) filter (where meter = 'effective_cost' and is_capacity) as unallocated_capacity_cost
    from lines
    where currency is not null
    group by all
),

-- Energy has no currency: a team billed in two currencies carries its energy on one row only
-- (the first currency by code), or summing a team's rows would count its energy twice.
cost_ranked as (
    select *, row_number() over (partition by month, team order by currency) as currency_rank
    from cost
),

energy as (
    select month, team,
        sum(amount) filter (where meter = 'gpu_hours_observed')::double as gpu_hours_observed,
        sum(amount) filter (where meter = 'gpu_hours_observed' and part = 'idle' and not is_capacity)::double as idle_gpu_hours,
        sum(amount) filter (where meter = 'gpu_hours_observed' and is_capacity)::double as unallocated_capacity_gpu_hours_observed,
        sum(amount) filter (where meter = 'effective_gpu_hours')::double as effective_gpu_hours,
        sum(amount) filter (where meter = 'it_energy_kwh')::double as it_energy_kwh,
        sum(amount) filter (where meter = 'it_energy_kwh_measured')::double as it_energy_kwh_measured,
        sum(amount) filter (where meter = 'facility_energy_kwh')::double as facility_energy_kwh,
        sum(amount) filter (where meter = 'facility_energy_kwh_low')::double as facility_energy_kwh_low,
        sum(amount) filter (where meter = 'facility_energy_kwh_high')::double as facility_energy_kwh_high,
        sum(amount) filter (where meter = 'co2e_kg')::double as co2e_kg,
        sum(amount) filter (where meter = 'co2e_kg_low')::double as co2e_kg_low,
        sum(amount) filter (where meter = 'co2e_kg_high')::double as co2e_kg_high,
        sum(amount) filter (where meter = 'co2e_market_kg')::double as co2e_market_kg,
        sum(amount) filter (where meter = 'co2e_market_kg_low')::double as co2e_market_kg_low,
        sum(amount) filter (where meter = 'co2e_market_kg_high')::double as co2e_market_kg_high,
        sum(amount) filter (where meter = 'co2e_hourly_kg')::double as co2e_hourly_kg,
        sum(amount) filter (where meter = 'co2e_hourly_kg_low')::double as co2e_hourly_kg_low,
        sum(amount) filter (where meter = 'co2e_hourly_kg_high')::double as co2e_hourly_kg_high,
        sum(amount) filter (where meter = 'facility_energy_kwh_hourly')::double as facility_energy_kwh_hourly,
        sum(amount) filter (where meter = 'facility_energy_kwh_market_na')::double as facility_energy_kwh_market_na
    from lines
    where currency is null
    group by all
),

-- Which coefficient rows a team's energy rests on: those of the energy lines it received.
assumptions as (
    select l.month, l.team, list_sort(list_distinct(flatten(list(e.all_assumption_ids)))) as assumption_ids
    from (select distinct month, team, source_group from lines where currency is null) l
    join int_energy_lines e using (month, source_group)
    group by all
),

joined as (
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
        coalesce(c.unallocated_capacity_gpu_hours, 0) as unallocated_capacity_gpu_hours,
        coalesce(e.unallocated_capacity_gpu_hours_observed, 0) as unallocated_capacity_gpu_hours_observed,
        e.effective_gpu_hours / nullif(e.gpu_hours_observed, 0) as util_mean,
        coalesce(e.it_energy_kwh, 0) as it_energy_kwh,
        coalesce(e.it_energy_kwh_measured, 0) as it_energy_kwh_measured,
        coalesce(e.facility_energy_kwh, 0) as facility_energy_kwh,
        coalesce(e.facility_energy_kwh_low, 0) as facility_energy_kwh_low,
        coalesce(e.facility_energy_kwh_high, 0) as facility_energy_kwh_high,
        coalesce(e.co2e_kg, 0) as co2e_kg,
        coalesce(e.co2e_kg_low, 0) as co2e_kg_low,
        coalesce(e.co2e_kg_high, 0) as co2e_kg_high,
        coalesce(a.assumption_ids, []) as assumption_ids,
        coalesce(c.billed_cost_direct, 0) as billed_cost_direct,
        coalesce(c.billed_cost_idle, 0) as billed_cost_idle,
        coalesce(c.billed_cost_shared, 0) as billed_cost_shared,
        coalesce(c.billed_cost_credits, 0) as billed_cost_credits,
        coalesce(c.effective_cost_direct, 0) as effective_cost_direct,
        coalesce(c.effective_cost_idle, 0) as effective_cost_idle,
        coalesce(c.effective_cost_shared, 0) as effective_cost_shared,
        coalesce(c.effective_cost_credits, 0) as effective_cost_credits,
        coalesce(c.idle_cost, 0) as idle_cost,
        coalesce(c.unallocated_capacity_cost, 0) as unallocated_capacity_cost,
        e.effective_gpu_hours,   -- null where no utilization was measured: unknown, not 0
        c.effective_cost / nullif(e.effective_gpu_hours, 0) as cost_per_effective_gpu_hour,
        e.co2e_market_kg,
        e.co2e_market_kg_low,
        e.co2e_market_kg_high,
        coalesce(e.co2e_hourly_kg, 0) as co2e_hourly_kg,
        coalesce(e.co2e_hourly_kg_low, 0) as co2e_hourly_kg_low,
        coalesce(e.co2e_hourly_kg_high, 0) as co2e_hourly_kg_high,
        coalesce(e.facility_energy_kwh_hourly, 0) as facility_energy_kwh_hourly,
        coalesce(e.facility_energy_kwh_market_na, 0) as facility_energy_kwh_market_na
    from cost_ranked c
    full outer join energy e on e.month = c.month and e.team = c.team and c.currency_rank = 1
    left join assumptions a on a.month = coalesce(c.month, e.month) and a.team = coalesce(c.team, e.team)
)

select
    j.*,
    p.billed_cost as billed_cost_prev_month,
    j.billed_cost - p.billed_cost as billed_cost_change,
    j.effective_cost - p.effective_cost as effective_cost_change,
    j.facility_energy_kwh - p.facility_energy_kwh as facility_energy_kwh_change
from joined j
left join joined p on p.team = j.team and p.currency is not distinct from j.currency
    and p.month = strftime(strptime(j.month, '%Y-%m') - interval 1 month, '%Y-%m')
