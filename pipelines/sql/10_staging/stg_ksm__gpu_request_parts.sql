-- A file's kube-state-metrics request and limit groups -> one row per pod container, resource
-- and UTC hour: what the pod reserved (Prometheus text or query_range JSON, read by the same
-- telemetry readers). kind: request | limit, from the metric's name.
select
    make_timestamp(hour_index * 3600000000) as hour_start,
    namespace,
    pod,
    container,
    host as node,
    resource,
    case when metric = 'kube_pod_container_resource_limits' then 'limit' else 'request' end as kind,
    sum(v_sum) as value_sum,
    sum(n_good) as n_samples
from _tel
where is_request and not bad_metric and n_good > 0 and resource is not null
group by hour_index, namespace, pod, container, host, resource, metric
