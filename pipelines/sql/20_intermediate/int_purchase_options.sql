-- Grain: month x resource x option. The buying alternatives for a material on-demand GPU
-- resource (findings_month lists them as findings), each with what it saves in the month:
--   commitment_candidate  the commitment discount on its spend (savings_plan_discount_gpu)
--   spot_candidate        list minus the Spot price estimate (spot_discount_gpu); value = the
--                         preemptions per hour at which Spot stops paying
--   owned_break_even      the difference over the hardware's life (hardware_lifetime_years)
--                         between renting and owning, per month of it; value = months to pay
--                         back the purchase. Purchase price per GPU by GPU model and server type
--                         (capital_costs.csv), else the generic owned_capex_usd_per_gpu
-- The three are alternatives for one resource: findings_ranked counts only the largest.
with param as (
    select assumption_id, value, low, high, coefficient_id from int_findings_params
),

thr as (
    select ms.value as material_share, mu.value as material_usd, life.value * getvariable('months_per_year') as life_months,
        [mu.coefficient_id, ms.coefficient_id] as material_ids
    from (select * from param where assumption_id = 'findings_material_share_of_gpu_cost') ms
    cross join (select * from param where assumption_id = 'findings_material_min_cost_usd') mu
    cross join (select * from param where assumption_id = 'hardware_lifetime_years') life
),

coef as (
    -- one row: each coefficient's value and range side by side
    select sp.value as sp, sp.low as sp_lo, sp.high as sp_hi, sd.value as sd, sd.low as sd_lo, sd.high as sd_hi,
        lh.value as lh, lh.low as lh_lo, lh.high as lh_hi, cx.value as cx, cx.low as cx_lo, cx.high as cx_hi,
        ox.value as ox, ox.low as ox_lo, ox.high as ox_hi
    from (select * from param where assumption_id = 'savings_plan_discount_gpu') sp
    cross join (select * from param where assumption_id = 'spot_discount_gpu') sd
    cross join (select * from param where assumption_id = 'spot_lost_hours_per_preemption') lh
    cross join (select * from param where assumption_id = 'owned_capex_usd_per_gpu') cx
    cross join (select * from param where assumption_id = 'owned_opex_usd_per_gpu_month') ox
),

on_demand as (
    select month, resource_id, mode_det(list(resolved_team)) as team, pick(instance_type) as instance_type,
        max(gpu_count) as gpus, sum(effective_cost)::double as cost,
        dsum(gpu_hours) / nullif(max(gpu_count), 0) as run_h,
        (24 * extract(day from last_day(strptime(month, '%Y-%m'))))::double as month_h
    from int_charges_teams
    where gpu_hours > 0 and coalesce(pricing_category, 'Standard') in ('Standard', 'On-Demand')
        and commitment_discount_id is null
    group by all
),

material as (
    -- Every on-demand GPU resource is a Spot and an owned-hardware candidate, so these options
    -- are kept to resources that matter: at least material_share of the month's GPU spend
    -- (at most 1 / share of them, whatever the fleet's size) and at least material_usd.
    select o.*
    from on_demand o
    inner join (select month, sum(effective_cost)::double as gpu_cost from int_charges_teams where gpu_hours > 0 group by all) m
        on o.month = m.month
    cross join thr
    where o.cost >= thr.material_share * m.gpu_cost and o.cost >= thr.material_usd
),

priced as (
    -- the purchase price per GPU of the resource's GPU model and server type, else the generic one
    select m.*, cc.server_type, coalesce(cc.gpu_model, 'any GPU') as gpu_model,
        coalesce(cc.value, c.cx) as cx, coalesce(cc.low, c.cx_lo) as cx_lo, coalesce(cc.high, c.cx_hi) as cx_hi,
        coalesce(cc.coefficient_id, 'assumptions:owned_capex_usd_per_gpu') as cx_id
    from material m
    cross join coef c
    left join (select instance_type, pick(gpu_model) as gpu_model from ref_instance_types group by all) it
        on m.instance_type = it.instance_type
    left join ref_capital_costs cc on it.gpu_model = cc.gpu_model
),

owned as (
    select p.*, p.gpus * p.cx / nullif(greatest(p.cost - p.gpus * c.ox, 0), 0) as payback_months,
        p.gpus * p.cx_lo / nullif(greatest(p.cost - p.gpus * c.ox_lo, 0), 0) as payback_low,
        p.gpus * p.cx_hi / nullif(greatest(p.cost - p.gpus * c.ox_hi, 0), 0) as payback_high,
        -- renting minus owning over the hardware's life, per month of it
        p.cost - p.gpus * owned_gpu_month_usd(p.cx, thr.life_months, c.ox) as saving_per_month
    from priced p cross join coef c cross join thr
)

-- the branches repeat a column on purpose (subject is the resource): names come from the first
-- noqa: disable=AL08
select o.month, 'commitment_candidate' as finding, o.resource_id as subject, o.resource_id, o.team,
    o.run_h / o.month_h as value, 'fraction of month' as unit, null::double as low, null::double as high,
    o.cost * c.sp as cost_usd,
    printf('%s ran %.0f of %.0f h on demand; a commitment pays above %.0f%% and saves its discount, %.0f USD (%.0f-%.0f)',
           o.instance_type, o.run_h, o.month_h, 100 * (1 - c.sp), o.cost * c.sp, o.cost * c.sp_lo, o.cost * c.sp_hi) as detail,
    list_concat(['assumptions:savings_plan_discount_gpu'], thr.material_ids) as assumption_ids
from material o cross join coef c cross join thr
where o.run_h / o.month_h > 1 - c.sp
union all
select o.month, 'spot_candidate', o.resource_id, o.resource_id, o.team,
    c.sd / ((1 - c.sd) * c.lh), 'preemptions/h', c.sd_lo / ((1 - c.sd_lo) * c.lh_hi), c.sd_hi / ((1 - c.sd_hi) * c.lh_lo),
    o.cost * c.sd,
    printf('list minus the Spot price estimate: %.0f USD (%.0f-%.0f) at no interruptions; Spot stops paying above %.2f interruptions per hour',
           o.cost * c.sd, o.cost * c.sd_lo, o.cost * c.sd_hi, c.sd / ((1 - c.sd) * c.lh)),
    list_concat(['assumptions:spot_discount_gpu', 'assumptions:spot_lost_hours_per_preemption'], thr.material_ids)
from material o cross join coef c cross join thr
union all
select o.month, 'owned_break_even', o.resource_id, o.resource_id, o.team,
    o.payback_months, 'months', o.payback_low, o.payback_high,
    greatest(o.saving_per_month, 0),
    -- a purchase that never pays back has no payback time: the text says so (a null would void it)
    printf('%d x %s (%s) at %.0f USD per GPU (%.0f-%.0f) %s at this month''s spend (%.0f%% of the month running); renting minus owning over the %.0f-month life: %.0f USD, %.0f a month',
           o.gpus::int, o.gpu_model, coalesce(o.server_type, 'generic server price'), o.cx, o.cx_lo, o.cx_hi,
           case when o.payback_months is null then 'never pay back' else printf('pay back in %.1f months', o.payback_months) end,
           100 * o.run_h / o.month_h, thr.life_months, o.saving_per_month * thr.life_months, o.saving_per_month),
    list_concat([o.cx_id, 'assumptions:owned_opex_usd_per_gpu_month', 'assumptions:hardware_lifetime_years'], thr.material_ids)
from owned o cross join thr
-- noqa: enable=AL08
