-- Grain: month x job x team. The GPU time a job claimed under a team (int_job_claims): its
-- GPU-hours (estimated: on billed GPU-hours no telemetry covers), GPUs, measured IT energy, the
-- FLOPs its GPUs could have done (GPU-seconds x dense peak for its precision, with the peak's
-- range; peak_unknown where a GPU's peak is not known) and its GPU-hour-weighted tensor-pipe
-- activity and utilization. Variables: s_per_h. Ephemeral: inlined into the models that read it.
select month, job_id, team,
    dsum(gpu_hours) as gpu_hours,
    coalesce(sum((gpu_hours)::decimal(38, 12)) filter (where basis = 'billed')::double, 0) as gpu_hours_estimated,
    count(distinct gpu_uuid) as gpus,
    dsum(it_energy_kwh) as it_energy_kwh_measured,
    dsum(gpu_hours * getvariable('s_per_h') * peak_flops) as peak_flop,
    dsum(gpu_hours * getvariable('s_per_h') * peak_flops_low) as peak_flop_low,
    dsum(gpu_hours * getvariable('s_per_h') * peak_flops_high) as peak_flop_high,
    bool_or(peak_flops is null and gpu_hours > 0) as peak_unknown,
    dsum(gpu_hours * tensor_active_mean) / nullif(sum((gpu_hours)::decimal(38, 12)) filter (where tensor_active_mean is not null)::double, 0) as tensor_active_mean,
    dsum(gpu_hours * util_mean) / nullif(sum((gpu_hours)::decimal(38, 12)) filter (where util_mean is not null)::double, 0) as util_mean,
    string_agg(distinct gpu_model, ', ' order by gpu_model) as gpu_models,
    list_sort(list_distinct(list(peak_id) filter (where peak_id is not null))) as peak_ids
from int_job_claims
group by all
