-- The warehouse: lineage, rejects and normalized facts. Every fact row keeps the file it came
-- from (file_id -> source_files.sha256) and its 1-based data row number in that file.
-- All timestamps are UTC, stored without a zone.
create sequence if not exists file_id_seq start 1;

create table if not exists source_files (
    file_id          integer primary key,
    path             varchar not null,
    sha256           varchar not null,
    kind             varchar not null,
    format_version   varchar,
    rows_read        bigint not null,
    rows_loaded      bigint not null,
    rows_rejected    bigint not null,
    status           varchar not null,   -- loaded | replaced
    loaded_at        timestamp not null,
    delivery_key     varchar,            -- billing account + period: a newer delivery replaces the older
    replaced_by      integer,
    totals           json
);

create table if not exists rejects (
    file_id      integer not null,
    row_number   bigint,
    column_name  varchar,
    check_name   varchar not null,
    value        varchar,
    message      varchar not null
);

-- A problem in a cell that is not an amount, a date or a key (a tag that does not parse, a
-- short row's missing trailing fields): the row is loaded, with that field null, and located
-- here as a reject would be. Nothing here leaves the totals.
create table if not exists row_findings (
    file_id      integer not null,
    row_number   bigint,
    column_name  varchar,
    check_name   varchar not null,
    value        varchar,
    message      varchar not null
);

create table if not exists charges (
    file_id                   integer not null,
    row_number                bigint not null,
    charge_line               integer not null default 0,   -- 0 the line itself; 1.. credits split out of it (GCP)
    provider                  varchar,
    billing_account_id        varchar,
    sub_account_id            varchar,
    billing_period_start      timestamp,
    charge_period_start       timestamp not null,
    charge_period_end         timestamp,
    charge_category           varchar not null,
    charge_class              varchar,
    charge_description        varchar,
    line_item_type            varchar,
    service_name              varchar,
    service_category          varchar,
    sku_id                    varchar,
    resource_id               varchar,
    instance_type             varchar,
    region                    varchar,
    pricing_category          varchar,
    commitment_discount_id    varchar,
    consumed_quantity         double,
    consumed_unit             varchar,
    billed_cost               decimal(38, 12) not null,
    effective_cost            decimal(38, 12),
    list_cost                 decimal(38, 12),
    billing_currency          varchar not null,
    invoice_id                varchar,       -- as the export names it (GCP: billing account/invoice month)
    tags                      map(varchar, varchar),
    gpu_model                 varchar,
    gpu_count                 double,        -- fractional for GPU slices (Azure NVads A10 v5)
    gpu_hours                 double,
    line_item_hash            bigint         -- 62-bit hash of the line item key where the format has one (CUR)
);
-- warehouses created before the column
alter table charges add column if not exists line_item_hash bigint;

-- Per file, physical GPU and UTC hour: the pieces from which int_gpu_hours is built. Raw samples
-- are streamed through, so a GPU-hour seen in several files (one scrape per file) is combined
-- from its parts; deleting a file's parts undoes that file exactly.
create table if not exists gpu_hour_parts (
    file_id            integer not null,
    host               varchar,
    gpu_uuid           varchar not null,
    gpu_index          varchar,
    gpu_model_raw      varchar,
    instance_id        varchar,
    hour_start         timestamp not null,
    n_scrapes          bigint not null,
    first_ts           timestamp not null,
    last_ts            timestamp not null,
    first_energy_mj    double,
    first_energy_ts    timestamp,
    last_energy_mj     double,
    last_energy_ts     timestamp,
    max_energy_mj      double,
    n_energy           bigint,
    n_energy_resets    bigint,
    power_w_sum        double,
    n_power            bigint,
    util_sum           double,
    n_util             bigint,
    sm_active_sum      double,
    n_sm_active        bigint,
    tensor_active_sum  double,
    n_tensor_active    bigint,
    power_w_min        double,
    power_w_max        double
);

-- Observed time per workload on a GPU-hour (scrapes that carried the pod's labels), per MIG
-- instance (its GPU_I_ID and profile) or virtual GPU (vgpu) where the series name one, with the
-- workload's graphics-engine activity (DCGM_FI_PROF_GR_ENGINE_ACTIVE: sum and samples) and its
-- first and last sample in the hour (pods whose times overlap share the GPU at once).
create table if not exists gpu_pod_parts (
    file_id       integer not null,
    gpu_uuid      varchar not null,
    hour_start    timestamp not null,
    namespace     varchar,
    pod           varchar,
    container     varchar,
    n_scrapes     bigint not null,
    mig_instance  varchar,
    mig_profile   varchar,
    vgpu          varchar,
    gr_active_sum double,
    n_gr_active   bigint,
    first_ts      timestamp,
    last_ts       timestamp,
    hpc_job       varchar        -- the batch job dcgm-exporter's HPC job mapping labels the series with
);

-- What pods reserved, per UTC hour (kube-state-metrics kube_pod_container_resource_requests and
-- _limits, every resource as written): the hour's samples and their sum, so the hour's mean is
-- value_sum / n_samples and the time the pod held it n_samples x the scrape interval.
create table if not exists gpu_request_parts (
    file_id     integer not null,
    hour_start  timestamp not null,
    namespace   varchar,
    pod         varchar,
    container   varchar,
    node        varchar,
    resource    varchar not null,
    kind        varchar not null,
    value_sum   double not null,
    n_samples   bigint not null
);

-- What a file's rows say that is worth a look but is not an error: loaded as-is, counted here
-- (e.g. the official FOCUS sample's BilledCost <> 0 with EffectiveCost = 0).
create table if not exists findings (
    file_id      integer not null,
    finding      varchar not null,
    rows         bigint not null,
    first_row    bigint,
    example      varchar,
    message      varchar not null
);

-- Columns added after warehouses were first built: `create table if not exists` leaves an older
-- table as it was, so they are added here, and stay null on the rows loaded before them.
alter table charges add column if not exists invoice_id varchar;
-- AWS split cost allocation data (a pod row of an EKS node: stg_aws_cur__charges.sql); null elsewhere
alter table charges add column if not exists split_parent_id varchar;
alter table charges add column if not exists split_cost decimal(38, 12);
alter table charges add column if not exists split_unused_cost decimal(38, 12);
alter table charges add column if not exists split_usage double;
alter table charges add column if not exists split_usage_ratio double;
alter table gpu_pod_parts add column if not exists mig_instance varchar;
alter table gpu_pod_parts add column if not exists mig_profile varchar;
alter table gpu_pod_parts add column if not exists vgpu varchar;
alter table gpu_pod_parts add column if not exists gr_active_sum double;
alter table gpu_pod_parts add column if not exists n_gr_active bigint;
alter table gpu_pod_parts add column if not exists first_ts timestamp;
alter table gpu_pod_parts add column if not exists last_ts timestamp;
alter table gpu_pod_parts add column if not exists hpc_job varchar;
