-- Grain: month x contract commitment, in the shape of findings_month (which unions it in).
--   commitment_unused  a FOCUS contract commitment (contract_commitments, the latest file's row
--                      of each id) that the month's charges drew on (ContractApplied:
--                      charge_contracts) for less than the month's pro-rata share of it.
--                      value = the fraction used; cost_usd = the committed cost left unused,
--                      in the billing currency (Spend: share of cost - applied cost; Usage:
--                      share of cost x unused fraction of the share of quantity).
-- Only months with charges are judged: a month not loaded is not a month unused.
with commitments as (
    select * from contract_commitments
    qualify row_number() over (partition by contract_commitment_id order by file_id desc, row_number asc) = 1
),

charge_months as (
    select distinct strftime(coalesce(billing_period_start, charge_period_start), '%Y-%m') as month
    from charges
),

shares as (
    -- the part of each commitment's period in each month that has charges
    select c.*, m.month,
        -- differences of epochs, not epoch() of an interval: the same SQL runs on Spark
        (epoch(least(c.period_end, strptime(m.month, '%Y-%m') + interval 1 month))
         - epoch(greatest(c.period_start, strptime(m.month, '%Y-%m'))))
        / (epoch(c.period_end) - epoch(c.period_start)) as share
    from commitments c
    join charge_months m
        on strptime(m.month, '%Y-%m') < c.period_end and strptime(m.month, '%Y-%m') + interval 1 month > c.period_start
),

applied as (
    select a.contract_commitment_id,
        strftime(coalesce(c.billing_period_start, c.charge_period_start), '%Y-%m') as month,
        sum(a.applied_cost) as applied_cost, sum(a.applied_quantity) as applied_quantity
    from charge_contracts a
    join charges c using (file_id, row_number)
    group by all
),

judged as (
    select s.month, s.contract_commitment_id, s.contract_commitment_category, s.billing_currency, s.contract_commitment_unit,
        s.contract_commitment_cost::double * s.share as committed_cost,
        s.contract_commitment_quantity * s.share as committed_quantity,
        coalesce(a.applied_cost, 0)::double as applied_cost, coalesce(a.applied_quantity, 0) as applied_quantity,
        case s.contract_commitment_category
            when 'Spend' then coalesce(a.applied_cost, 0)::double / nullif(s.contract_commitment_cost::double * s.share, 0)
            else coalesce(a.applied_quantity, 0) / nullif(s.contract_commitment_quantity * s.share, 0)
        end as used
    from shares s
    left join applied a using (contract_commitment_id, month)
)

select month, 'commitment_unused' as finding, contract_commitment_id as subject, null::varchar as resource_id,
    null::varchar as team, used as value, 'fraction' as unit, null::double as low, null::double as high,
    committed_cost * (1 - used) as cost_usd, null::double as energy_kwh,
    case contract_commitment_category
        when 'Spend' then printf('%s %.2f of %.2f committed for the month drawn on (%.0f%%)',
                                 billing_currency, applied_cost, committed_cost, 100 * used)
        else printf('%.1f of %.1f %s committed for the month drawn on (%.0f%%)',
                    applied_quantity, committed_quantity, coalesce(contract_commitment_unit, ''), 100 * used)
    end as detail,
    []::varchar[] as assumption_ids
from judged
where used < 1
