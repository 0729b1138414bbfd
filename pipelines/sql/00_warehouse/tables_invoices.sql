-- Invoices as issued (typed from the PDF a cloud sends, or exported from its console): what
-- reconciliation compares the billing exports with. Like every fact table, each row keeps its
-- file (file_id -> source_files) and its 1-based data row in that file.
create table if not exists invoices (
    file_id             integer not null,
    row_number          bigint not null,
    invoice_id          varchar not null,
    issuer              varchar,
    billing_account_id  varchar,
    period              varchar not null,          -- YYYY-MM: the billing month invoiced
    amount              decimal(38, 12) not null,  -- total due, in currency (negative: a credit note)
    currency            varchar not null
);
