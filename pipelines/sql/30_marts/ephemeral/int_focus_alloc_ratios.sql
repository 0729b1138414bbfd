-- Grain: origin line x team x rule (int_focus_alloc_costs). The row's part of its origin: by
-- list cost (rho, what quantities and other summable columns follow, so unit price x quantity
-- still meets the cost) and by billed cost (ratio, the AllocatedRatio); each rounded, the last
-- part taking the rest, so both add up to 1 exactly. The rounded parts of the origin's
-- contracted cost and quantities (*_raw) are rho's; focus_allocated gives the last part the rest.
-- Energy and CO2e are no part of the price: each meter's part (*_part) is the row's energy under
-- its team and rule on the line's resource (int_focus_alloc_energy) over the origin rows' sum,
-- null where the origin's rows hold none of it (focus_allocated then falls back to rho).
-- Ephemeral: inlined into its readers.
with ratios as (
    select c.*,
        round(coalesce(c.list_cell / nullif(c.ListCost, 0), c.billed_cell / nullif(c.BilledCost, 0),
                       c.share::decimal(38, 12)), 12)::decimal(38, 12) as rho_raw,
        round(coalesce(c.billed_cell / nullif(c.BilledCost, 0), c.share::decimal(38, 12)), 12)::decimal(38, 12) as ratio_raw,
        coalesce(e.kwh, 0) as e_kwh, coalesce(e.kwh_low, 0) as e_kwh_low, coalesce(e.kwh_high, 0) as e_kwh_high,
        coalesce(e.co2e, 0) as e_co2e, coalesce(e.co2e_low, 0) as e_co2e_low, coalesce(e.co2e_high, 0) as e_co2e_high
    from int_focus_alloc_costs c
    left join int_focus_alloc_energy e on e.source_group = c.source_group and e.team = c.team and e.rule = c.rule
)

select *,
    case when part < parts then rho_raw else 1 - coalesce(sum(case when part < parts then rho_raw end) over origin, 0) end as rho,
    case when part < parts then ratio_raw else 1 - coalesce(sum(case when part < parts then ratio_raw end) over origin, 0) end as ratio,
    round(ContractedCost * rho_raw, 12)::decimal(38, 12) as contracted_raw,
    round(PricingCurrencyEffectiveCost * rho_raw, 12)::decimal(38, 12) as pc_effective_raw,
    round(ConsumedQuantity * rho_raw, 12)::decimal(38, 12) as consumed_raw,
    round(PricingQuantity * rho_raw, 12)::decimal(38, 12) as pricing_raw,
    round(CommitmentDiscountQuantity * rho_raw, 12)::decimal(38, 12) as cd_quantity_raw,
    (e_kwh / nullif(sum(e_kwh) over origin, 0))::double as kwh_part,
    (e_kwh_low / nullif(sum(e_kwh_low) over origin, 0))::double as kwh_low_part,
    (e_kwh_high / nullif(sum(e_kwh_high) over origin, 0))::double as kwh_high_part,
    (e_co2e / nullif(sum(e_co2e) over origin, 0))::double as co2e_part,
    (e_co2e_low / nullif(sum(e_co2e_low) over origin, 0))::double as co2e_low_part,
    (e_co2e_high / nullif(sum(e_co2e_high) over origin, 0))::double as co2e_high_part
from ratios
window origin as (partition by x_SourceFileSha256, x_SourceRow, x_SourceLine)
