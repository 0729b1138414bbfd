-- Work logs: what the platform's own jobs did (kind `work`). One row per job or serving window,
-- with its placement (namespace/pod, or host and GPU UUIDs), its UTC window and its units of
-- work. Like every fact table, each row keeps its file (file_id -> source_files) and its 1-based
-- data row in that file. job_month (marts) turns these into cost, energy and CO2e per unit.
create table if not exists work_log (
    file_id            integer not null,
    row_number         bigint not null,
    job_id             varchar not null,
    workload           varchar not null,     -- training | serving
    namespace          varchar,              -- Kubernetes namespace the job's pods ran in
    pod                varchar,              -- pod name or glob (pretrain-1b-*); null = the whole namespace
    host               varchar,              -- host (DCGM Hostname) for jobs placed by host
    gpu_uuids          varchar[],            -- the job's GPUs on that host; empty = all of them
    gpus               double,               -- GPU count, for a host with no telemetry (share of the billed node)
    start_utc          timestamp not null,
    end_utc            timestamp not null,
    params             double,               -- model parameters (total)
    active_params      double,               -- parameters active per token (mixture of experts)
    tokens             double,               -- training tokens, or tokens served (prompt + generated)
    samples            double,
    requests           double,
    precision          varchar,              -- fp32 | tf32 | bf16 | fp16 | fp8: the peak MFU is measured against
    gpu_model_raw      varchar,              -- as written; only read where telemetry names no GPU
    gpu_model          varchar,              -- canonical id (gpu_specs), null when unresolved
    tokens_per_s       double                -- the job's own throughput log: mean tokens/s over the window
);
