-- Grain: origin line x team x rule (int_focus_alloc_costs). The row's part of its origin: by
-- list cost (rho, what quantities and other summable columns follow, so unit price x quantity
-- still meets the cost) and by billed cost (ratio, the AllocatedRatio); each rounded, the last
-- part taking the rest, so both add up to 1 exactly. The rounded parts of the origin's
-- contracted cost and quantities (*_raw) are rho's; focus_allocated gives the last part the rest.
-- Ephemeral: inlined into its readers.
with ratios as (
    select *,
        round(coalesce(list_cell / nullif(ListCost, 0), billed_cell / nullif(BilledCost, 0),
                       share::decimal(38, 12)), 12)::decimal(38, 12) as rho_raw,
        round(coalesce(billed_cell / nullif(BilledCost, 0), share::decimal(38, 12)), 12)::decimal(38, 12) as ratio_raw
    from int_focus_alloc_costs
)

select *,
    case when part < parts then rho_raw else 1 - coalesce(sum(case when part < parts then rho_raw end) over origin, 0) end as rho,
    case when part < parts then ratio_raw else 1 - coalesce(sum(case when part < parts then ratio_raw end) over origin, 0) end as ratio,
    round(ContractedCost * rho_raw, 12)::decimal(38, 12) as contracted_raw,
    round(PricingCurrencyEffectiveCost * rho_raw, 12)::decimal(38, 12) as pc_effective_raw,
    round(ConsumedQuantity * rho_raw, 12)::decimal(38, 12) as consumed_raw,
    round(PricingQuantity * rho_raw, 12)::decimal(38, 12) as pricing_raw,
    round(CommitmentDiscountQuantity * rho_raw, 12)::decimal(38, 12) as cd_quantity_raw
from ratios
window origin as (partition by x_SourceFileSha256, x_SourceRow, x_SourceLine)
