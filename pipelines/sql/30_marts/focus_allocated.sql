-- FOCUS 1.3 / 1.4 rows: focus_export's lines with meterbook's allocation in the standard's split
-- cost allocation columns. Grain: one row per focus_export line the chargeback gives to one team
-- (AllocatedMethodId null, as delivered), and one row per line x team x rule for a line of a
-- source group it splits over several (allocated charges, in place of their origin charge: the
-- file sums to the bill). The rows of one origin share its x_SourceFileSha256, x_SourceRow and
-- x_SourceLine, and carry its costs in x_OriginBilledCost / x_OriginEffectiveCost.
-- Exact, in DECIMAL(38, 12), per origin and per team at once: a team's part of a line is the
-- line times the team's share, the last part takes what the others left; then each team's
-- difference to its allocation_lines amount (the chargeback's, whole quanta) goes on the group's
-- largest line, where the differences cancel. So the allocated rows of an origin add up to it,
-- and summed per team they are team_month's billed, effective and list cost. Other summable
-- columns (quantities, contracted cost, x_ measures) follow the list-cost ratio of the row, so
-- unit price x quantity still meets the cost; unit prices and dimensions are the origin's.
with parts as (
    select b.source_group, b.team, b.rule, b.share,
        b.amount as billed_part, e.amount as effective_part, l.amount as list_part,
        row_number() over (partition by b.source_group order by b.share desc, b.team asc, b.rule asc) as part,
        count(*) over (partition by b.source_group) as parts,
        -- the fix-up needs the parts to add up to the lines; they do whenever the group is whole
        sum(b.amount) over (partition by b.source_group) as billed_parts,
        sum(e.amount) over (partition by b.source_group) as effective_parts,
        sum(l.amount) over (partition by b.source_group) as list_parts
    from allocation_lines b
    left join allocation_lines e on e.source_group = b.source_group and e.team = b.team and e.rule = b.rule
        and e.meter = 'effective_cost'
    left join allocation_lines l on l.source_group = b.source_group and l.team = b.team and l.rule = b.rule
        and l.meter = 'list_cost'
    where b.meter = 'billed_cost' and b.share > 0
),

contracts as (
    select f.sha256, c.row_number,
        list({'ContractId': c.contract_id, 'ContractCommitmentId': c.contract_commitment_id,
              'ContractCommitmentAppliedCost': c.applied_cost, 'ContractCommitmentAppliedQuantity': c.applied_quantity,
              'ContractCommitmentAppliedUnit': c.applied_unit}
             order by c.contract_commitment_id, c.applied_cost, c.applied_quantity) as elements
    from charge_contracts c
    join source_files f using (file_id)
    group by all
),

lines as (
    select e.*, c.elements,
        sum(e.BilledCost) over grp as billed_lines,
        sum(e.EffectiveCost) over grp as effective_lines,
        sum(e.ListCost) over grp as list_lines,
        -- the group's largest line takes the rounding differences
        row_number() over (partition by e.source_group
                           order by abs(e.BilledCost) desc, e.x_SourceFileSha256 asc, e.x_SourceRow asc, e.x_SourceLine asc) = 1 as anchor
    from focus_export e
    left join contracts c on c.sha256 = e.x_SourceFileSha256 and c.row_number = e.x_SourceRow and e.x_SourceLine = 0
    window grp as (partition by e.source_group)
),

proportional as (
    select l.*, p.team, p.rule, p.share, p.part, p.parts, p.billed_part, p.effective_part, p.list_part,
        p.billed_parts, p.effective_parts, p.list_parts,
        round(l.BilledCost * p.share::decimal(38, 12), 12)::decimal(38, 12) as billed_raw,
        round(l.EffectiveCost * p.share::decimal(38, 12), 12)::decimal(38, 12) as effective_raw,
        round(l.ListCost * p.share::decimal(38, 12), 12)::decimal(38, 12) as list_raw
    from lines l
    join parts p on p.source_group = l.source_group and p.parts > 1
),

row_exact as (
    select *,
        case when part < parts then billed_raw
             else BilledCost - coalesce(sum(case when part < parts then billed_raw end) over origin, 0) end as billed_row,
        case when part < parts then effective_raw
             else EffectiveCost - coalesce(sum(case when part < parts then effective_raw end) over origin, 0) end as effective_row,
        case when part < parts then list_raw
             else ListCost - coalesce(sum(case when part < parts then list_raw end) over origin, 0) end as list_row
    from proportional
    window origin as (partition by x_SourceFileSha256, x_SourceRow, x_SourceLine)
),

team_exact as (
    select *,
        billed_row + case when anchor and billed_parts = billed_lines
                          then billed_part - sum(billed_row) over team_group else 0 end as billed_cell,
        effective_row + case when anchor and effective_parts = effective_lines
                             then effective_part - sum(effective_row) over team_group else 0 end as effective_cell,
        list_row + case when anchor and list_parts = list_lines
                        then list_part - sum(list_row) over team_group else 0 end as list_cell
    from row_exact
    window team_group as (partition by source_group, team, rule)
),

-- the row's part of its origin: by list cost (what quantities follow), by billed cost (the
-- AllocatedRatio); each rounded, the last part taking the rest, so both add up to 1 exactly
ratios as (
    select *,
        round(coalesce(list_cell / nullif(ListCost, 0), billed_cell / nullif(BilledCost, 0),
                       share::decimal(38, 12)), 12)::decimal(38, 12) as rho_raw,
        round(coalesce(billed_cell / nullif(BilledCost, 0), share::decimal(38, 12)), 12)::decimal(38, 12) as ratio_raw
    from team_exact
),

scaled as (
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
),

split as (
    select * exclude (elements, team, rule, share, part, parts, anchor, billed_part, effective_part, list_part,
                      billed_parts, effective_parts, list_parts, billed_lines, effective_lines, list_lines,
                      billed_raw, effective_raw, list_raw, billed_row, effective_row, list_row, billed_cell,
                      effective_cell, list_cell, rho_raw, ratio_raw, rho, ratio, contracted_raw, pc_effective_raw,
                      consumed_raw, pricing_raw, cd_quantity_raw)
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
            x_EnergyKwh * rho::double as x_EnergyKwh,
            x_EnergyKwhLow * rho::double as x_EnergyKwhLow,
            x_EnergyKwhHigh * rho::double as x_EnergyKwhHigh,
            x_CO2eKg * rho::double as x_CO2eKg,
            x_CO2eKgLow * rho::double as x_CO2eKgLow,
            x_CO2eKgHigh * rho::double as x_CO2eKgHigh,
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
    from scaled
    window origin as (partition by x_SourceFileSha256, x_SourceRow, x_SourceLine)
),

whole as (
    select * exclude (elements, billed_lines, effective_lines, list_lines, anchor),
        null::varchar as AllocatedMethodId, null::varchar as AllocatedMethodDetails, null::varchar as AllocatedResourceId,
        null::varchar as AllocatedResourceName, null::varchar as AllocatedTags, elements as applied,
        null::decimal(38, 12) as x_OriginBilledCost, null::decimal(38, 12) as x_OriginEffectiveCost
    from lines
    where source_group not in (select p.source_group from parts p where p.parts > 1)
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
