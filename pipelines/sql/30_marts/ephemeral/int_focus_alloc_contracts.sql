-- Grain: billing row (file sha256 x row) that drew on contract commitments (charge_contracts).
-- The commitments it drew on, as FOCUS ContractApplied elements; line 0 of the row carries them.
-- Ephemeral: inlined into its readers.
select f.sha256, c.row_number,
    list({'ContractId': c.contract_id, 'ContractCommitmentId': c.contract_commitment_id,
          'ContractCommitmentAppliedCost': c.applied_cost, 'ContractCommitmentAppliedQuantity': c.applied_quantity,
          'ContractCommitmentAppliedUnit': c.applied_unit}
         order by c.contract_commitment_id, c.applied_cost, c.applied_quantity) as elements
from charge_contracts c
join source_files f using (file_id)
group by all
