-- A file's kube-state-metrics request and limit groups -> one row per pod container, resource
-- and UTC hour: what the pod reserved (Prometheus text or query_range JSON, read by the same
-- telemetry readers). kind: request | limit, from the metric's name. A pod's Run:ai gpu-fraction
-- annotation or label (kube_pod_annotations, kube_pod_labels: the sample is 1, the fraction is in
-- the label) is a request of resource runai_gpu_fraction.
select
    make_timestamp(hour_index * 3600000000) as hour_start,
    namespace,
    pod,
    container,
    host as node,
    coalesce(resource, 'runai_gpu_fraction') as resource,
    case when metric = 'kube_pod_container_resource_limits' then 'limit' else 'request' end as kind,
    sum(coalesce(try_cast(gpu_fraction as double) * n_good, v_sum)) as value_sum,
    sum(n_good) as n_samples
from _tel
where is_request and not bad_metric and n_good > 0
    and (resource is not null or metric in ('kube_pod_annotations', 'kube_pod_labels') and try_cast(gpu_fraction as double) > 0)
group by hour_index, namespace, pod, container, host, resource, metric
