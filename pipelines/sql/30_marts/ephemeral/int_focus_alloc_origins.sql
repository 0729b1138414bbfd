-- Grain: focus_export line (an origin of focus_allocated's rows). The line with its source
-- group's sums of billed, effective and list cost, whether it is the group's largest line (the
-- anchor, which takes the rounding differences) and, on line 0 of a billing row, the contract
-- commitments the row drew on (charge_contracts, as FOCUS ContractApplied elements).
-- Ephemeral: inlined into its readers.
with contracts as (
    select f.sha256, c.row_number,
        list({'ContractId': c.contract_id, 'ContractCommitmentId': c.contract_commitment_id,
              'ContractCommitmentAppliedCost': c.applied_cost, 'ContractCommitmentAppliedQuantity': c.applied_quantity,
              'ContractCommitmentAppliedUnit': c.applied_unit}
             order by c.contract_commitment_id, c.applied_cost, c.applied_quantity) as elements
    from charge_contracts c
    join source_files f using (file_id)
    group by all
)

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
