-- What FOCUS 1.3 and 1.4 add beside the charges. Keyed like charges by file and data row.
--
-- focus_allocations: a provider-calculated split (FOCUS 1.3 "data generator-calculated split
-- cost allocation"): the provider took one charge (the origin charge) and wrote it as several
-- allocated charges whose costs add up to it. Each allocated row is a charges row; this keeps
-- what it was allocated to, the source of the `provider_split` allocation rule.
create table if not exists focus_allocations (
    file_id                  integer not null,
    row_number               bigint not null,
    allocated_method_id      varchar not null,  -- AllocatedMethodId: names the provider's method
    allocated_resource_id    varchar,           -- AllocatedResourceId: what the share went to
    allocated_resource_name  varchar,
    allocated_ratio          double,            -- sum of AllocatedMethodDetails Elements[].AllocatedRatio (0..1)
    allocated_usage_quantity double,            -- sum of Elements[].UsageQuantity
    allocated_usage_unit     varchar,           -- Elements[].UsageUnit when all elements share it
    allocated_tags           map(varchar, varchar),
    method_details           varchar            -- AllocatedMethodDetails as written (JSON)
);

-- focus_origin_charges: an origin charge written in the same file as its allocated rows. Its
-- cost is in charges once already, through the allocated rows, so it is kept here and not in
-- charges (counted as loaded: it is in the warehouse).
create table if not exists focus_origin_charges (
    file_id                 integer not null,
    row_number              bigint not null,
    resource_id             varchar,
    charge_period_start     timestamp,
    billing_currency        varchar,
    billed_cost             decimal(38, 12),
    effective_cost          decimal(38, 12),
    allocated_rows          integer not null,  -- its allocated rows in the file
    allocated_billed_cost   decimal(38, 12)    -- their billed cost: equal to billed_cost by the spec
);

-- charge_contracts: FOCUS 1.3 ContractApplied, one row per element: which contract commitment a
-- charge drew on and how much of it (cost or quantity).
create table if not exists charge_contracts (
    file_id                 integer not null,
    row_number              bigint not null,
    contract_id             varchar,
    contract_commitment_id  varchar,
    applied_cost            decimal(38, 12),   -- ContractCommitmentAppliedCost, billing currency
    applied_quantity        double,            -- ContractCommitmentAppliedQuantity
    applied_unit            varchar
);

-- contract_commitments: the FOCUS 1.3/1.4 Contract Commitment dataset (kind focus_commitments),
-- one row per commitment a contract holds.
create table if not exists contract_commitments (
    file_id                        integer not null,
    row_number                     bigint not null,
    contract_commitment_id         varchar not null,
    contract_commitment_type       varchar,
    contract_commitment_category   varchar not null,  -- Spend or Usage
    contract_commitment_cost       decimal(38, 12),   -- in billing_currency, for the whole period
    contract_commitment_quantity   double,
    contract_commitment_unit       varchar,
    description                    varchar,
    period_start                   timestamp not null,
    period_end                     timestamp not null,
    contract_id                    varchar,
    billing_currency               varchar
);

-- invoice_details: the FOCUS 1.4 Invoice Detail dataset (kind focus_invoices), as written; the
-- invoices table holds one row per invoice, their sum.
create table if not exists invoice_details (
    file_id            integer not null,
    row_number         bigint not null,
    invoice_id         varchar not null,
    invoice_detail_id  varchar,
    charge_category    varchar,
    billed_cost        decimal(38, 12) not null,
    billing_currency   varchar not null
);
