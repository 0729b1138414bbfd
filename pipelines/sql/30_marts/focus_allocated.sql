-- FOCUS 1.3 / 1.4 rows: focus_export's lines with meterbook's allocation in the standard's split
-- cost allocation columns. Grain: one row per focus_export line the chargeback gives to one team
-- (AllocatedMethodId null, as delivered), and one row per line x team x rule for a line of a
-- source group it splits over several (allocated charges, in place of their origin charge: the
-- file sums to the bill). The rows of one origin share its x_SourceFileSha256, x_SourceRow and
-- x_SourceLine, and carry its costs in x_OriginBilledCost / x_OriginEffectiveCost.
-- Exact, in DECIMAL(38, 12): the costs of a split row are its team's cells
-- (int_focus_alloc_costs), so the allocated rows of an origin add up to it, and summed per team
-- they are team_month's billed, effective and list cost (x_*CostInReportingCurrency: those cells
-- at the line's exchange rate, never the origin's whole amount). Energy and CO2e (x_EnergyKwh,
-- x_CO2eKg and their ranges) follow the allocation engine: a row takes the line's energy in
-- proportion to its team's energy under its rule on the line's resource (int_focus_alloc_energy),
-- so the line keeps its total and the rows summed per team are team_month's facility energy and
-- CO2e (for the energy of billed resources: GPUs no bill covers have no line here). Other summable
-- columns (quantities, contracted cost, x_GpuHours) follow the list-cost ratio of the row
-- (int_focus_alloc_ratios), so unit price x quantity still meets the cost; unit prices and
-- dimensions are the origin's.

-- a row of a split origin: its team's cells, its team's energy, the origin's other summable
-- columns by rho (the last part taking what the others left), and the allocation's own columns
with split as (
    select * exclude (elements, team, rule, share, part, parts, anchor, billed_part, effective_part, list_part,
                      billed_parts, effective_parts, list_parts, billed_lines, effective_lines, list_lines,
                      billed_raw, effective_raw, list_raw, billed_row, effective_row, list_row, billed_cell,
                      effective_cell, list_cell, rho_raw, ratio_raw, rho, ratio, contracted_raw, pc_effective_raw,
                      consumed_raw, pricing_raw, cd_quantity_raw, e_kwh, e_kwh_low, e_kwh_high, e_co2e, e_co2e_low,
                      e_co2e_high, kwh_part, kwh_low_part, kwh_high_part, co2e_part, co2e_low_part, co2e_high_part)
        replace (
            billed_cell as BilledCost,
            effective_cell as EffectiveCost,
            list_cell as ListCost,
            case when part < parts then contracted_raw
                 else ContractedCost - coalesce(sum(case when part < parts then contracted_raw end) over origin, 0) end as ContractedCost,
            case when part < parts then pc_effective_raw
                 else PricingCurrencyEffectiveCost
                      - coalesce(sum(case when part < parts then pc_effective_raw end) over origin, 0) end as PricingCurrencyEffectiveCost,
            case when part < parts then consumed_raw
                 else ConsumedQuantity - coalesce(sum(case when part < parts then consumed_raw end) over origin, 0) end as ConsumedQuantity,
            case when part < parts then pricing_raw
                 else PricingQuantity - coalesce(sum(case when part < parts then pricing_raw end) over origin, 0) end as PricingQuantity,
            case when part < parts then cd_quantity_raw
                 else CommitmentDiscountQuantity
                      - coalesce(sum(case when part < parts then cd_quantity_raw end) over origin, 0) end as CommitmentDiscountQuantity,
            x_GpuHours * rho::double as x_GpuHours,
            -- the team's own energy on the line's resource, as the chargeback allocates it
            x_EnergyKwh * coalesce(kwh_part, rho::double) as x_EnergyKwh,
            x_EnergyKwhLow * coalesce(kwh_low_part, rho::double) as x_EnergyKwhLow,
            x_EnergyKwhHigh * coalesce(kwh_high_part, rho::double) as x_EnergyKwhHigh,
            x_CO2eKg * coalesce(co2e_part, rho::double) as x_CO2eKg,
            x_CO2eKgLow * coalesce(co2e_low_part, rho::double) as x_CO2eKgLow,
            x_CO2eKgHigh * coalesce(co2e_high_part, rho::double) as x_CO2eKgHigh,
            -- the row's own part in the reporting currency, as focus_export converts a whole line
            (billed_cell * x_ExchangeRate)::decimal(38, 12) as x_BilledCostInReportingCurrency,
            (effective_cell * x_ExchangeRate)::decimal(38, 12) as x_EffectiveCostInReportingCurrency,
            team as x_Team,
            rule as x_AllocationRule,
            share as x_AllocatedShare
        ),
        'meterbook:' || rule as AllocatedMethodId,
        '{"Elements":[{"AllocatedRatio":' || rtrim(rtrim(ratio::varchar, '0'), '.') || '}]}' as AllocatedMethodDetails,
        -- the unallocated part of the origin is allocated to no resource
        'team/' || nullif(team, getvariable('unallocated')) as AllocatedResourceId,
        nullif(team, getvariable('unallocated')) as AllocatedResourceName,
        to_json({'meterbook/team': team})::varchar as AllocatedTags,
        -- what the origin drew on its contract commitments, in the row's part
        list_transform(elements, lambda c: {'ContractId': c.ContractId, 'ContractCommitmentId': c.ContractCommitmentId,
            'ContractCommitmentAppliedCost': round(c.ContractCommitmentAppliedCost * rho, 12)::decimal(38, 12),
            'ContractCommitmentAppliedQuantity': c.ContractCommitmentAppliedQuantity * rho::double,
            'ContractCommitmentAppliedUnit': c.ContractCommitmentAppliedUnit}) as applied,
        BilledCost as x_OriginBilledCost,
        EffectiveCost as x_OriginEffectiveCost
    from int_focus_alloc_ratios
    window origin as (partition by x_SourceFileSha256, x_SourceRow, x_SourceLine)
),

-- a line of a group with one part, as delivered
whole as (
    select e.*,
        null::varchar as AllocatedMethodId, null::varchar as AllocatedMethodDetails, null::varchar as AllocatedResourceId,
        null::varchar as AllocatedResourceName, null::varchar as AllocatedTags, c.elements as applied,
        null::decimal(38, 12) as x_OriginBilledCost, null::decimal(38, 12) as x_OriginEffectiveCost
    from focus_export e
    left join int_focus_alloc_contracts c on c.sha256 = e.x_SourceFileSha256 and c.row_number = e.x_SourceRow
        and e.x_SourceLine = 0
    where e.source_group not in (select p.source_group from int_focus_alloc_parts p where p.parts > 1)
),

rows as (
    select * from split
    union all by name
    select * from whole
)

-- FOCUS 1.3 names the provider twice; a cloud bill's seller hosts what it sells
select * exclude (applied),
    ProviderName as ServiceProviderName,
    ProviderName as HostProviderName,
    case when array_length(applied) > 0 then to_json({'Elements': applied})::varchar end as ContractApplied
from rows
