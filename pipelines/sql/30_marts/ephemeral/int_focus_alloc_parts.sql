-- Grain: source group x team x rule with a billed-cost share above 0 (allocation_lines). A
-- team's part of the group: its share and its amounts of billed, effective and list cost; its
-- place among the group's parts (largest share first) and their count; and the parts' sums,
-- which the fix-up of focus_allocated needs to add up to the group's lines. Ephemeral: inlined
-- into its readers.
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
