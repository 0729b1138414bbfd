-- FOCUS Contract Commitment dataset (kind focus_commitments) -> contract_commitments. Input:
-- temp view raw_commitments with the FOCUS column names and row_number. A commitment is Spend (a
-- cost over its period) or Usage (a quantity of a unit; its cost, when given, is what it costs).
-- Grain: one row per data row.
with source as (
    select * from raw_commitments
),

typed as (
    select
        row_number,
        nullif(trim(ContractCommitmentId), '') as contract_commitment_id,
        nullif(trim(ContractCommitmentType), '') as contract_commitment_type,
        nullif(trim(ContractCommitmentCategory), '') as contract_commitment_category,
        money(ContractCommitmentCost) as contract_commitment_cost,
        num(ContractCommitmentQuantity) as contract_commitment_quantity,
        nullif(trim(ContractCommitmentUnit), '') as contract_commitment_unit,
        ContractCommitmentDescription as description,
        utc_ts(ContractCommitmentPeriodStart) as period_start,
        utc_ts(ContractCommitmentPeriodEnd) as period_end,
        nullif(trim(ContractId), '') as contract_id,
        upper(trim(BillingCurrency)) as billing_currency,
        ContractCommitmentCost as _cost, ContractCommitmentQuantity as _quantity,
        ContractCommitmentPeriodStart as _start, ContractCommitmentPeriodEnd as _end
    from source
)

select
    * exclude (_cost, _quantity, _start, _end),
    errors([
        cast_err('ContractCommitmentCost', _cost, contract_commitment_cost, 'decimal'),
        cast_err('ContractCommitmentQuantity', _quantity, contract_commitment_quantity, 'number'),
        cast_err('ContractCommitmentPeriodStart', _start, period_start, 'timestamp'),
        cast_err('ContractCommitmentPeriodEnd', _end, period_end, 'timestamp'),
        case when period_end <= period_start then
            {'column_name': 'ContractCommitmentPeriodEnd', 'check_name': 'period_end_after_start', 'value': _end,
             'message': 'the commitment period ends before it starts'} end
    ]) as _errors
from typed
