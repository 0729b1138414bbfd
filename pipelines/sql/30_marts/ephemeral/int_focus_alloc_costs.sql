-- Grain: origin line (int_focus_alloc_origins) x team x rule, for the lines of a source group
-- split over several parts (int_focus_alloc_parts). The team's billed, effective and list cost
-- of the line, exact in DECIMAL(38, 12) per origin and per team at once: a team's part of a line
-- is the line times the team's share, the last part takes what the others left (the row
-- amounts); then each team's difference to its allocation_lines amount (the chargeback's, whole
-- quanta) goes on the group's largest line, where the differences cancel (the cells). So the
-- cells of an origin add up to it, and summed per team they are team_month's billed, effective
-- and list cost. Ephemeral: inlined into its readers.
with proportional as (
    select l.*, p.team, p.rule, p.share, p.part, p.parts, p.billed_part, p.effective_part, p.list_part,
        p.billed_parts, p.effective_parts, p.list_parts,
        round(l.BilledCost * p.share::decimal(38, 12), 12)::decimal(38, 12) as billed_raw,
        round(l.EffectiveCost * p.share::decimal(38, 12), 12)::decimal(38, 12) as effective_raw,
        round(l.ListCost * p.share::decimal(38, 12), 12)::decimal(38, 12) as list_raw
    from int_focus_alloc_origins l
    join int_focus_alloc_parts p on p.source_group = l.source_group and p.parts > 1
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
)

select *,
    billed_row + case when anchor and billed_parts = billed_lines
                      then billed_part - sum(billed_row) over team_group else 0 end as billed_cell,
    effective_row + case when anchor and effective_parts = effective_lines
                         then effective_part - sum(effective_row) over team_group else 0 end as effective_cell,
    list_row + case when anchor and list_parts = list_lines
                    then list_part - sum(list_row) over team_group else 0 end as list_cell
from row_exact
window team_group as (partition by source_group, team, rule)
