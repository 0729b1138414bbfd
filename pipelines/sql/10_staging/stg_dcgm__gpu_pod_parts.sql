-- A file's telemetry groups -> observed scrapes per GPU-hour and workload labels (the
-- best-covered metric of each label set), per MIG instance and virtual GPU, with the label
-- set's graphics-engine activity, and the Slurm job (hpc_job) a series names. Empty pod labels
-- are time with no workload.
select
    gpu_uuid,
    make_timestamp(hour_index * 3600000000) as hour_start,
    namespace,
    pod,
    container,
    sum(n) as n_scrapes,
    mig_instance,
    pick(mig_profile) as mig_profile,
    vgpu,
    sum(gr_sum) as gr_active_sum,
    sum(n_gr) as n_gr_active,
    make_timestamp(min(t0_ms) * 1000) as first_ts,
    make_timestamp(max(t1_ms) * 1000) as last_ts,
    job as hpc_job
from (
    select
        gpu_uuid, hour_index, namespace, pod, container, mig_instance, mig_profile, vgpu, job, labels,
        max(n_good) as n, min(t0_ms) as t0_ms, max(t1_ms) as t1_ms,
        sum(v_sum * to_canonical) filter (where field = 'gr_active_ratio') as gr_sum,
        sum(n_good) filter (where field = 'gr_active_ratio') as n_gr
    from _tel where not bad_metric and not no_gpu and not is_request and n_good > 0
    group by gpu_uuid, hour_index, namespace, pod, container, mig_instance, mig_profile, vgpu, job, labels
)
group by gpu_uuid, hour_index, namespace, pod, container, mig_instance, vgpu, job
