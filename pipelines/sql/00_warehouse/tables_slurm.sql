-- Slurm accounting (kind `slurm`): `sacct --parsable2` exports, one row per job record as
-- written, allocations and their steps alike (is_step), so rows read = loaded + rejected. A
-- job's GPUs and window come from its allocation row only: its steps (123.batch, 123.0) run
-- inside that allocation and add nothing to it.
create table if not exists slurm_jobs (
    file_id            integer not null,
    row_number         bigint not null,
    job_id             varchar not null,     -- as written: 123, 123_4 (array task), 123+0 (het component), 123.batch (step)
    job_key            varchar not null,     -- the allocation the row belongs to (job_id up to its step suffix)
    is_step            boolean not null,     -- a step (123.batch, 123.extern, 123.0): not counted again
    job_name           varchar,
    user_name          varchar,
    account            varchar,              -- Slurm account: maps to a team through [teams.accounts]
    partition          varchar,
    cluster            varchar,              -- sacct's Cluster column where exported
    gpus               double not null,      -- GPUs allocated (AllocTRES gres/gpu, else the sum of gres/gpu:<type>)
    gpu_type           varchar,              -- the <type> of gres/gpu:<type>=N, as Slurm names it
    node_list          varchar,              -- Slurm's compressed host list, as written
    state              varchar,              -- first word of State (CANCELLED by 123 -> CANCELLED)
    start_utc          timestamp,            -- null: the job never started (PENDING)
    end_utc            timestamp,            -- End, else Start + ElapsedRaw for a running job
    consumed_energy_j  double                -- ConsumedEnergyRaw: Slurm's energy for the job's nodes (whole nodes)
);

-- DCGM job statistics (kind `dcgmi-stats`): `dcgmi stats --job <id> --verbose` output, one row per
-- GPU block of a job (the summary block where the output is not verbose: gpu_id null). The job's
-- own measured energy on each of its GPUs, between the prologue's --jstart and the epilogue's --jstop.
create table if not exists dcgm_job_stats (
    file_id            integer not null,
    row_number         bigint not null,     -- the block's place in the file (1 = the first GPU block)
    job_id             varchar not null,    -- as given to dcgmi stats --jstart (the Slurm job id, by convention)
    host               varchar,             -- --host at ingest, else none: the output does not name it
    gpu_id             integer,             -- DCGM's GPU id on the host; null: the job's summary over its GPUs
    start_utc          timestamp not null,
    end_utc            timestamp not null,
    execution_s        double,              -- Total Execution Time (sec)
    energy_j           double not null,     -- Energy Consumed (Joules)
    power_w_avg        double,
    sm_util_avg        double,              -- SM Utilization (%) average, as a ratio 0-1
    mem_util_avg       double               -- Memory Utilization (%) average, as a ratio 0-1
);
