-- Grain: focus_export line of a source group split over several parts (int_focus_alloc_parts):
-- the origins focus_allocated splits. The line with its source group's sums of billed, effective
-- and list cost, whether it is the group's largest line (the anchor, which takes the rounding
-- differences) and, on line 0 of a billing row, the contract commitments the row drew on
-- (int_focus_alloc_contracts). Lines of other groups stay whole and need none of these, so the
-- window reads only the split groups' lines. Ephemeral: inlined into its readers.
select e.*, c.elements,
    sum(e.BilledCost) over grp as billed_lines,
    sum(e.EffectiveCost) over grp as effective_lines,
    sum(e.ListCost) over grp as list_lines,
    -- the group's largest line takes the rounding differences
    row_number() over (partition by e.source_group
                       order by abs(e.BilledCost) desc, e.x_SourceFileSha256 asc, e.x_SourceRow asc, e.x_SourceLine asc) = 1 as anchor
from focus_export e
left join int_focus_alloc_contracts c on c.sha256 = e.x_SourceFileSha256 and c.row_number = e.x_SourceRow and e.x_SourceLine = 0
where e.source_group in (select p.source_group from int_focus_alloc_parts p where p.parts > 1)
window grp as (partition by e.source_group)
