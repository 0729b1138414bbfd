-- A file's telemetry groups -> observed scrapes per GPU-hour and workload labels (the
-- best-covered metric of each label set). Empty pod labels are time with no workload.
select
    gpu_uuid,
    make_timestamp(hour_index * 3600000000) as hour_start,
    namespace,
    pod,
    container,
    sum(n) as n_scrapes
from (
    select gpu_uuid, hour_index, namespace, pod, container, labels, max(n_good) as n
    from _tel where not bad_metric and not no_gpu and n_good > 0
    group by all
)
group by all
