-- FOCUS 1.4 Invoice Detail (kind focus_invoices) -> invoice_details, and invoices by their sum.
-- Input: temp view raw_invoice_details with the FOCUS names and row_number. The rows of one
-- InvoiceId must agree on its billing account, period and currency: where they differ, nothing
-- says which is the invoice's, and every row of it is rejected. Grain: one row per data row.
with source as (
    select * from raw_invoice_details
),

typed as (
    select
        row_number,
        nullif(trim(InvoiceId), '') as invoice_id,
        nullif(trim(InvoiceDetailId), '') as invoice_detail_id,
        nullif(trim(InvoiceIssuerName), '') as issuer,
        nullif(trim(BillingAccountId), '') as billing_account_id,
        strftime(utc_ts(BillingPeriodStart), '%Y-%m') as period,
        nullif(trim(ChargeCategory), '') as charge_category,
        money(BilledCost) as billed_cost,
        upper(trim(BillingCurrency)) as currency,
        BilledCost as _billed_cost, BillingPeriodStart as _period
    from source
),

agreed as (
    select
        *,
        count(distinct coalesce(billing_account_id, '') || '|' || coalesce(period, '') || '|' || coalesce(currency, ''))
            over (partition by invoice_id) as _variants
    from typed
)

select
    * exclude (_billed_cost, _period, _variants),
    errors([
        cast_err('BilledCost', _billed_cost, billed_cost, 'decimal'),
        cast_err('BillingPeriodStart', _period, period, 'timestamp'),
        case when invoice_id is not null and _variants > 1 then
            {'column_name': 'InvoiceId', 'check_name': 'invoice_rows_agree', 'value': invoice_id,
             'message': 'the rows of this invoice name different billing accounts, periods or currencies'} end
    ]) as _errors
from agreed
order by row_number
