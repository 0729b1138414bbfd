-- Invoices file (kind invoices: invoice_id, issuer, billing_account_id, period, amount,
-- currency) -> invoices. Input: temp view raw_invoices with canonical names and row_number.
-- period is YYYY-MM (a date is read as its month); amount is a plain decimal, no thousands
-- separators (a typed "8,063.77" would be ambiguous with a decimal comma). An id given twice in
-- one file is rejected on every row that has it: nothing says which amount is right.
-- Grain: one row per data row.
with source as (
    select * from raw_invoices
),

typed as (
    select
        row_number,
        nullif(trim(invoice_id), '') as invoice_id,
        nullif(trim(issuer), '') as issuer,
        nullif(trim(billing_account_id), '') as billing_account_id,
        strftime(coalesce(try_strptime(trim(period), '%Y-%m'), try_strptime(trim(period), '%Y-%m-%d')), '%Y-%m') as period,
        money(amount) as amount,
        upper(trim(currency)) as currency,
        count(*) over (partition by nullif(trim(invoice_id), '')) as _same_id,
        period as _period, amount as _amount
    from source
)

select
    * exclude (_same_id, _period, _amount),
    errors([
        cast_err('amount', _amount, amount, 'decimal'),
        cast_err('period', _period, period, 'month'),
        case when invoice_id is not null and _same_id > 1 then
            {'column_name': 'invoice_id', 'check_name': 'unique_invoice_id', 'value': invoice_id,
             'message': 'the same invoice id is on several rows of this file'} end
    ]) as _errors
from typed
