-- Each distinct label set of a telemetry file, parsed once: GPU identity, host, workload.
-- Input: _tel_groups(metric, labels, ...). Spellings drift across exporter versions
-- (Hostname -> hostname, UUID / gpu_uuid, modelName / model_name); a MIG instance keeps its
-- GPU's UUID, which is what folds instances into one physical GPU later.
with sets as (
    select distinct labels from _tel_groups
)

select
    labels,
    prom_label(labels, 'UUID|gpu_uuid') as uuid_label,
    gpu_identity(labels) as gpu_uuid,
    prom_label(labels, 'gpu') as gpu_index,
    prom_label(labels, 'modelName|model_name') as gpu_model_raw,
    prom_label(labels, 'Hostname|hostname|NODE_NAME|node') as host,
    -- the cloud instance id (instance_id, ec2_instance_id, provider_id, ...: see the macro)
    instance_label(labels) as instance_id,
    prom_label(labels, 'namespace') as namespace,
    prom_label(labels, 'pod') as pod,
    prom_label(labels, 'container') as container,
    prom_label(labels, 'GPU_I_ID') as mig_instance,
    -- a batch scheduler's job id (dcgm-exporter's HPC mapping); Prometheus' own `job` label is
    -- the scrape job, not a workload, so it is not read
    prom_label(labels, 'hpc_job') as job
from sets
