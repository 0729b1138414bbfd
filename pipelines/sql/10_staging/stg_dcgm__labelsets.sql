-- Each distinct label set of a telemetry file, parsed once: GPU identity, host, workload.
-- Input: _tel_groups(metric, labels, ...). Spellings drift across exporter versions
-- (Hostname -> hostname, UUID / gpu_uuid, modelName / model_name); a MIG instance keeps its
-- GPU's UUID, which is what folds instances into one physical GPU later.
-- Label values are written escaped (the exposition format: \\ for a backslash, \" for a quote,
-- \n for a line feed); they are decoded here, once per label set, and only where a backslash
-- is: a namespace `team\"x` must map to the team of `team"x`. Splitting at every `\\` first
-- pairs the backslashes as the format does, so `\\n` is a backslash and an n.
with sets as (
    select distinct labels from _tel_groups
),

written as (
    select
        labels,
        [
            prom_label(labels, 'UUID|gpu_uuid'),
            gpu_identity(labels),
            prom_label(labels, 'gpu'),
            prom_label(labels, 'modelName|model_name'),
            prom_label(labels, 'Hostname|hostname|NODE_NAME|node'),
            -- the cloud instance id (instance_id, ec2_instance_id, provider_id, ...: see the macro)
            instance_label(labels),
            prom_label(labels, 'namespace'),
            prom_label(labels, 'pod'),
            prom_label(labels, 'container'),
            prom_label(labels, 'GPU_I_ID'),
            -- the MIG instance's profile (1g.10gb ...) and, with --kubernetes-virtual-gpus, the
            -- shared GPU's virtual device the pod holds
            prom_label(labels, 'GPU_I_PROFILE'),
            prom_label(labels, 'vgpu'),
            -- a batch scheduler's job id (dcgm-exporter's HPC mapping); Prometheus' own `job`
            -- label is the scrape job, not a workload, so it is not read
            prom_label(labels, 'hpc_job'),
            -- kube-state-metrics: the resource a request or limit is of, and its unit
            prom_label(labels, 'resource'),
            prom_label(labels, 'unit'),
            -- Run:ai's gpu-fraction, as kube-state-metrics writes an allow-listed pod annotation or label
            prom_label(labels, 'annotation_gpu_fraction|label_gpu_fraction')
        ] as raw
    from sets
),

decoded as (
    select
        labels,
        list_transform(raw, lambda x: case
            when strpos(x, '\') > 0
                then array_to_string(list_transform(string_split(x, '\\'),
                                                    lambda p: replace(replace(p, '\"', '"'), '\n', chr(10))), '\')
            else x end) as v
    from written
)

select
    labels,
    v[1] as uuid_label,
    v[2] as gpu_uuid,
    v[3] as gpu_index,
    v[4] as gpu_model_raw,
    v[5] as host,
    v[6] as instance_id,
    v[7] as namespace,
    v[8] as pod,
    v[9] as container,
    v[10] as mig_instance,
    v[11] as mig_profile,
    v[12] as vgpu,
    v[13] as job,
    v[14] as resource,
    v[15] as resource_unit,
    v[16] as gpu_fraction
from decoded
