-- Telemetry groups with their labels and canonical field: the common shape every telemetry
-- reader (Prometheus text, query_range JSON, long CSV, dmon) produces, and the rejects rule.
-- Grain: metric x label set x UTC hour. Lines of a group are rejected together when the group
-- names no GPU (no UUID, and no host + gpu index) or has no valid metric name; otherwise only
-- its bad values are. A pod's resource requests (kube-state-metrics) name no GPU and are no
-- rejects: is_request sends them to gpu_request_parts.
select
    g.*,
    l.* exclude (labels),
    l.gpu_uuid,
    f.field,
    f.to_canonical,
    -- an empty metric cell (a long CSV's) is NULL here: a bad name too, as the reject pass says
    coalesce(not regexp_full_match(g.metric, '[a-zA-Z_:][a-zA-Z0-9_:]*'), true) as bad_metric,
    is_request_metric(g.metric) as is_request,
    l.gpu_uuid is null and not is_request_metric(g.metric) as no_gpu
from _tel_groups g
join _tel_labelsets l using (labels)
left join dcgm_fields f on f.field_name = g.metric
