-- Grain: month x billed resource, in the shape of whatif_month (which unions it in): the spot
-- lever. spot_share of each on-demand GPU resource's spend on Spot: the discount, less the work
-- redone after interruptions (hours, energy, CO2e); rework per Spot hour: interruptions per
-- instance-hour x hours lost each.
with p as (
    select
        max(value) filter (where assumption_id = 'whatif_spot_share') as spot_share,
        max(value) filter (where assumption_id = 'spot_discount_gpu') as d, max(low) filter (where assumption_id = 'spot_discount_gpu') as d_lo,
        max(high) filter (where assumption_id = 'spot_discount_gpu') as d_hi,
        max(value) filter (where assumption_id = 'spot_interruptions_per_month') as r, max(low) filter (where assumption_id = 'spot_interruptions_per_month') as r_lo,
        max(high) filter (where assumption_id = 'spot_interruptions_per_month') as r_hi,
        max(value) filter (where assumption_id = 'spot_lost_hours_per_preemption') as l, max(low) filter (where assumption_id = 'spot_lost_hours_per_preemption') as l_lo,
        max(high) filter (where assumption_id = 'spot_lost_hours_per_preemption') as l_hi
    from int_whatif_params
),

on_demand as (
    select c.month, c.resource_id, pick(c.zone) as zone, mode_det(list(c.resolved_team)) as team,
        sum(c.effective_cost)::double as cost_usd,
        (24 * extract(day from last_day(strptime(c.month, '%Y-%m'))))::double as month_h
    from int_charges_teams c
    where c.gpu_hours > 0 and coalesce(c.pricing_category, 'Standard') in ('Standard', 'On-Demand') and c.commitment_discount_id is null
    group by c.month, c.resource_id
),

resource_energy as (
    select month, resource_id, dsum(facility_energy_kwh) as kwh, dsum(facility_energy_kwh_low) as kwh_lo,
        dsum(facility_energy_kwh_high) as kwh_hi, dsum(co2e_hourly_kg) as co2e, dsum(co2e_hourly_kg_low) as co2e_lo,
        dsum(co2e_hourly_kg_high) as co2e_hi
    from int_energy_lines where resource_id is not null group by all
)

select o.month, 'spot' as lever, printf('spot share %.0f%%', 100 * p.spot_share) as scenario, o.resource_id as subject, o.team,
    o.zone, o.cost_usd as baseline_cost_usd, e.kwh as baseline_energy_kwh, e.co2e as baseline_co2e_kg,
    o.cost_usd * p.spot_share * ((1 - p.d) * (1 + p.r / o.month_h * p.l) - 1) as cost_usd_delta,
    o.cost_usd * p.spot_share * ((1 - p.d_hi) * (1 + p.r_lo / o.month_h * p.l_lo) - 1) as cost_usd_delta_low,
    o.cost_usd * p.spot_share * ((1 - p.d_lo) * (1 + p.r_hi / o.month_h * p.l_hi) - 1) as cost_usd_delta_high,
    e.kwh * p.spot_share * p.r / o.month_h * p.l as energy_kwh_delta,
    e.kwh_lo * p.spot_share * p.r_lo / o.month_h * p.l_lo as energy_kwh_delta_low,
    e.kwh_hi * p.spot_share * p.r_hi / o.month_h * p.l_hi as energy_kwh_delta_high,
    e.co2e * p.spot_share * p.r / o.month_h * p.l as co2e_kg_delta,
    e.co2e_lo * p.spot_share * p.r_lo / o.month_h * p.l_lo as co2e_kg_delta_low,
    e.co2e_hi * p.spot_share * p.r_hi / o.month_h * p.l_hi as co2e_kg_delta_high,
    printf('%.0f%% of %.2f on Spot at %.0f%% off; %.2f%% of its hours redone after interruptions',
           100 * p.spot_share, o.cost_usd, 100 * p.d, 100 * p.r / o.month_h * p.l) as detail,
    ['assumptions:whatif_spot_share', 'assumptions:spot_discount_gpu', 'assumptions:spot_interruptions_per_month',
     'assumptions:spot_lost_hours_per_preemption'] as assumption_ids
from on_demand o
cross join p
left join resource_energy e on e.month = o.month and e.resource_id = o.resource_id
