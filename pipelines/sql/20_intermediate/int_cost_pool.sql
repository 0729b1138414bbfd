-- Grain: month x owned cluster ([[clusters]]). What the cluster cost in the month, the pool its
-- chargeback distributes in place of an invoice, for every month its jobs or its hosts'
-- telemetry fall in:
--   capital_usd   GPUs x purchase price per GPU / (lifetime x 12): the config's capex_usd_per_gpu,
--                 else capital_costs.csv for its gpu_model, else owned_capex_usd_per_gpu
--   running_usd   GPUs x operations per GPU-month (owned_ops_usd_per_gpu_month), plus, for the
--                 share of its GPU-hours no telemetry covers, the power inside the running cost
--                 (owned_opex_usd_per_gpu_month less operations): GPUs x opex with no telemetry
--   power_usd     measured energy of its hosts (gpu_hours, every tier) x PUE x electricity price:
--                 the covered GPU-hours' power, so an hour of telemetry prices an hour's power
-- The purchase and running parts are the one formula of the owned-hardware finding
-- (owned_gpu_month_usd). pool_usd is rounded to the cent. capacity_gpu_hours = GPUs x the month's hours: what is not used by jobs
-- is the idle line. Ranges: the low and high ends of every coefficient together.
with coef as (
    select lh.value as life, lh.low as life_lo, lh.high as life_hi, lh.coefficient_id as life_id,
        cx.value as cx, cx.low as cx_lo, cx.high as cx_hi, cx.coefficient_id as cx_id,
        op.value as ops, op.low as ops_lo, op.high as ops_hi, op.coefficient_id as ops_id,
        ox.value as ox, ox.low as ox_lo, ox.high as ox_hi, ox.coefficient_id as ox_id,
        pr.value as price, pr.low as price_lo, pr.high as price_hi, pr.coefficient_id as price_id,
        pu.value as pue, pu.low as pue_lo, pu.high as pue_hi, pu.coefficient_id as pue_id
    from (select * from ref_assumptions where assumption_id = 'hardware_lifetime_years') lh
    cross join (select * from ref_assumptions where assumption_id = 'owned_capex_usd_per_gpu') cx
    cross join (select * from ref_assumptions where assumption_id = 'owned_ops_usd_per_gpu_month') op
    cross join (select * from ref_assumptions where assumption_id = 'owned_opex_usd_per_gpu_month') ox
    cross join (select * from ref_assumptions where assumption_id = 'electricity_price_usd_per_kwh') pr
    cross join (select * from ref_assumptions where assumption_id = 'pue_unknown') pu
),

capital_costs as (
    -- one price per GPU model: the first server type, by name
    select gpu_model, arg_min(value, server_type) as value, arg_min(low, server_type) as low,
        arg_min(high, server_type) as high, arg_min(coefficient_id, server_type) as coefficient_id
    from ref_capital_costs
    group by gpu_model
),

clusters as (
    -- a figure the config gives is the user's own: no range, cited as the config
    select c.cluster, c.gpus, c.gpu_model,
        coalesce(c.capex_usd_per_gpu, cc.value, k.cx) as capex, coalesce(c.capex_usd_per_gpu, cc.low, k.cx_lo) as capex_lo,
        coalesce(c.capex_usd_per_gpu, cc.high, k.cx_hi) as capex_hi,
        case when c.capex_usd_per_gpu is not null then 'config:clusters.capex_usd_per_gpu'
             else coalesce(cc.coefficient_id, k.cx_id) end as capex_id,
        coalesce(c.lifetime_years, k.life) * getvariable('months_per_year') as life_months,
        coalesce(c.lifetime_years, k.life_lo) * getvariable('months_per_year') as life_months_lo,
        coalesce(c.lifetime_years, k.life_hi) * getvariable('months_per_year') as life_months_hi,
        case when c.lifetime_years is not null then 'config:clusters.lifetime_years' else k.life_id end as life_id,
        coalesce(c.ops_usd_per_gpu_month, k.ops) as ops, coalesce(c.ops_usd_per_gpu_month, k.ops_lo) as ops_lo,
        coalesce(c.ops_usd_per_gpu_month, k.ops_hi) as ops_hi,
        case when c.ops_usd_per_gpu_month is not null then 'config:clusters.ops_usd_per_gpu_month' else k.ops_id end as ops_id,
        k.ox, k.ox_lo, k.ox_hi, k.ox_id,
        coalesce(c.electricity_usd_per_kwh, k.price) as price, coalesce(c.electricity_usd_per_kwh, k.price_lo) as price_lo,
        coalesce(c.electricity_usd_per_kwh, k.price_hi) as price_hi,
        case when c.electricity_usd_per_kwh is not null then 'config:clusters.electricity_usd_per_kwh' else k.price_id end
            as price_id,
        coalesce(c.pue, k.pue) as pue, coalesce(c.pue, k.pue_lo) as pue_lo, coalesce(c.pue, k.pue_hi) as pue_hi,
        case when c.pue is not null then 'config:clusters.pue' else k.pue_id end as pue_id
    from cfg_clusters c
    cross join coef k
    left join capital_costs cc on cc.gpu_model = c.gpu_model
),

energy as (
    select h.cluster, strftime(g.hour_start, '%Y-%m') as month, dsum(g.energy_kwh) as it_energy_kwh,
        dsum(g.energy_kwh_low) as it_energy_kwh_low, dsum(g.energy_kwh_high) as it_energy_kwh_high,
        dsum(g.energy_coverage) as covered_gpu_hours
    from int_gpu_hours g
    join cfg_cluster_members h on h.kind = 'host' and h.name = g.host
    group by all
),

used as (
    select cluster, month, dsum(gpu_hours) as used_gpu_hours, count(distinct job_id) as jobs
    from int_cluster_jobs
    group by all
),

months as (
    select cluster, month from used
    union
    select cluster, month from energy
),

sized as (
    select m.cluster, m.month, c.* exclude (cluster), q.quantum_places,
        c.gpus * (epoch(strptime(m.month, '%Y-%m') + interval 1 month) - epoch(strptime(m.month, '%Y-%m')))
            / getvariable('s_per_h') as capacity_gpu_hours,
        coalesce(u.used_gpu_hours, 0) as used_gpu_hours, coalesce(u.jobs, 0) as jobs,
        e.it_energy_kwh, e.it_energy_kwh_low, e.it_energy_kwh_high,
        e.it_energy_kwh is not null as power_measured, coalesce(e.covered_gpu_hours, 0) as covered_gpu_hours
    from months m
    join clusters c using (cluster)
    left join used u using (cluster, month)
    left join energy e using (cluster, month)
    cross join (select quantum_places from cfg_meters where meter = 'billed_cost') q
),

priced as (
    -- the share of the month's GPU-hours whose power is not priced from energy
    select *, greatest(capacity_gpu_hours - covered_gpu_hours, 0) / capacity_gpu_hours as unpriced
    from sized
)

select
    month,
    cluster,
    gpus,
    gpu_model,
    capacity_gpu_hours,
    used_gpu_hours,
    greatest(capacity_gpu_hours - used_gpu_hours, 0) as idle_gpu_hours,
    used_gpu_hours > capacity_gpu_hours as overbooked,
    jobs,
    case when not power_measured then 'in the running cost (no energy measured)'
         when unpriced = 0 then 'measured energy x price'
         else 'measured energy x price for ' || round(covered_gpu_hours, 1)::varchar || ' of '
             || round(capacity_gpu_hours, 1)::varchar || ' GPU-hours, the rest in the running cost' end as power_basis,
    it_energy_kwh * pue as facility_energy_kwh,
    gpus * capex / life_months as capital_usd,
    gpus * (ops + (ox - ops) * unpriced) as running_usd,
    coalesce(it_energy_kwh * pue * price, 0) as power_usd,
    -- the pool to the cent (the money quantum of cfg_meters): the lines that share it add up to it
    -- (scaled, rounded, scaled back: Spark's round() takes its places only as a constant)
    round((gpus * owned_gpu_month_usd(capex, life_months, ops + (ox - ops) * unpriced)
           + coalesce(it_energy_kwh * pue * price, 0)) * power(10, quantum_places)) / power(10, quantum_places) as pool_usd,
    gpus * owned_gpu_month_usd(capex_lo, life_months_hi, ops_lo + (ox_lo - ops_lo) * unpriced)
        + coalesce(it_energy_kwh_low * pue_lo * price_lo, 0) as pool_usd_low,
    gpus * owned_gpu_month_usd(capex_hi, life_months_lo, ops_hi + (ox_hi - ops_hi) * unpriced)
        + coalesce(it_energy_kwh_high * pue_hi * price_hi, 0) as pool_usd_high,
    list_sort(list_distinct(list_filter(
        [capex_id, life_id, case when unpriced < 1 then ops_id end, case when unpriced > 0 then ox_id end,
         case when power_measured then price_id end, case when power_measured then pue_id end],
        lambda x: x is not null))) as assumption_ids
from priced
