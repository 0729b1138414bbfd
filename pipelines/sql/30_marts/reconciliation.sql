-- Grain: month x currency x invoice x basis. What was invoiced, the export lines billed on it,
-- and what the chargeback allocated of those lines (allocation_lines, billed_cost).
--   basis 'invoice'         an invoice loaded from an invoices file (kind invoices); month is its
--                           period; difference = allocated - invoice amount
--   basis 'cost pool'       an owned cluster's month (int_cost_pool): its lines against the pool
--   basis 'loaded exports'  export lines no loaded invoice covers, one row per invoice id they
--                           carry (null: none); the reference is their own sum (the exports
--                           reconcile with themselves only); difference = allocated - lines
-- A line belongs to an invoice by id (FOCUS InvoiceId, CUR bill/InvoiceId, Azure InvoiceId, GCP
-- billing account/invoice month) in the invoice's period and currency. Lines whose id no loaded
-- invoice has (FOCUS before 1.2, a GCP invoice typed with Google's invoice number) go to the one
-- invoice of their billing account, period and currency that no line matched by id, if exactly one.
-- An invoice id loaded from several files counts once: the latest file's.
-- status: reconciled (difference rounds to 0.00) | differs | no export lines.
with inv as (
    select i.*, 'invoice' as basis
    from invoices i
    join source_files f on f.file_id = i.file_id and f.status = 'loaded'
    qualify row_number() over (partition by i.invoice_id order by i.file_id desc) = 1
    union all by name
    -- an owned cluster's cost pool stands where an invoice would (int_cost_pool_lines name it)
    select printf('cost pool %s %s', cluster, month) as invoice_id, 'owned cluster' as issuer,
        cluster as billing_account_id, month as period, pool_usd::decimal(38, 12) as amount, 'USD' as currency,
        'cost pool' as basis
    from int_cost_pool
),

lines as (
    select month, billing_currency as currency, billing_account_id, invoice_id as export_invoice_id,
        source_group, billed_cost
    from int_charges_teams
),

unclaimed as (
    -- invoices no line matched by id, when alone for their account, period and currency
    select * from inv i
    where not exists (select 1 from lines l where l.export_invoice_id = i.invoice_id and l.month = i.period
                                               and l.currency = i.currency)
    qualify count(*) over (partition by billing_account_id, period, currency) = 1
),

keyed as (
    select l.*, coalesce(i.invoice_id, u.invoice_id) as invoice_id
    from lines l
    left join inv i on i.invoice_id = l.export_invoice_id and i.period = l.month and i.currency = l.currency
    left join unclaimed u on i.invoice_id is null and u.billing_account_id = l.billing_account_id
        and u.period = l.month and u.currency = l.currency
),

group_keys as (
    -- a source group is one month and currency; nearly always one invoice too
    select month, currency, source_group, invoice_id is not null as invoiced,
        coalesce(invoice_id, export_invoice_id) as ref_id, count(*) as n_lines, sum(billed_cost) as billed
    from keyed
    group by all
),

allocated as (
    -- each group's allocated billed cost, shared over its invoices by their lines' billed cost
    -- (equal shares when those net to zero); exact whenever the group is one invoice
    select k.*,
        case when a.allocated = sum(k.billed) over g then k.billed
             else k.billed + ((coalesce(a.allocated, 0) - sum(k.billed) over g)
                              * coalesce(k.billed / nullif(sum(k.billed) over g, 0), 1 / count(*) over g))::decimal(38, 12)
        end as allocated
    from group_keys k
    left join (select source_group, sum(amount) as allocated from allocation_lines
               where meter = 'billed_cost' group by all) a using (source_group)
    window g as (partition by k.source_group)
),

per_ref as (
    select month, currency, invoiced, ref_id, sum(n_lines) as lines, sum(billed) as export_billed_cost,
        sum(allocated) as allocated_billed_cost
    from allocated
    group by all
),

invoiced as (
    select i.period as month, i.currency, i.invoice_id, i.basis, i.issuer, i.billing_account_id,
        i.amount as invoice_amount, i.file_id as invoice_file_id,
        coalesce(p.lines, 0) as lines, coalesce(p.export_billed_cost, 0) as export_billed_cost,
        coalesce(p.allocated_billed_cost, 0) as allocated_billed_cost,
        coalesce(p.allocated_billed_cost, 0) - i.amount as difference
    from inv i
    left join per_ref p on p.invoiced and p.ref_id = i.invoice_id and p.month = i.period and p.currency = i.currency
    union all
    select month, currency, ref_id, 'loaded exports', null, null, null, null,
        lines, export_billed_cost, allocated_billed_cost, allocated_billed_cost - export_billed_cost
    from per_ref
    where not invoiced
)

select r.*,
    case when r.lines = 0 then 'no export lines'
         -- rounds to 0.00: under half the money quantum (a cent) either way
         when abs(r.difference) * 10 ** m.quantum_places < 0.5 then 'reconciled'
         else 'differs' end as status
from invoiced r
cross join (select quantum_places from cfg_meters where meter = 'billed_cost') m
