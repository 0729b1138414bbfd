-- Grain: month. How much of the billed GPU fleet telemetry describes, so a utilization figure is
-- read with its coverage: billed GPU-hours and GPU cost in all, and the part telemetry saw (each
-- resource's by its observed share, int_resource_coverage); observed GPU-hours; utilization
-- weighted by observed time, over the observed GPU-hours that report one (gpu_hours_with_util:
-- MIG slices, time-sliced GPUs and hosts scraped without the utilization field have none).
with billed as (
    select month, resource_id, dsum(gpu_hours) as gpu_hours, sum(effective_cost) as gpu_cost
    from int_charges_teams
    where gpu_hours > 0
    group by all
),

observed as (
    select strftime(hour_start, '%Y-%m') as month,
        dsum(coverage) as gpu_hours_observed,
        coalesce(sum(coverage::decimal(38, 12)) filter (where util_mean is not null), 0)::double as gpu_hours_with_util,
        (sum((coverage * util_mean)::decimal(38, 12)) filter (where util_mean is not null)
            / nullif(sum(coverage::decimal(38, 12)) filter (where util_mean is not null), 0))::double as util_mean,
        count(distinct gpu_uuid) as gpus_observed,
        -- how much of an observed GPU-hour the scrapes cover (hours a gap fills are not observed)
        (sum(coverage::decimal(38, 12)) filter (where n_scrapes > 0) / nullif(count(*) filter (where n_scrapes > 0), 0))::double as scrape_coverage
    from int_gpu_hours
    group by all
),

fleet as (
    select b.month,
        dsum(b.gpu_hours) as gpu_hours_billed,
        coalesce(sum((b.gpu_hours * c.telemetry_share)::decimal(38, 12)), 0)::double as gpu_hours_billed_with_telemetry,
        sum(b.gpu_cost) as gpu_cost,
        coalesce(sum((b.gpu_cost * c.telemetry_share)::decimal(38, 12)), 0) as gpu_cost_with_telemetry
    from billed b
    left join int_resource_coverage c using (month, resource_id)
    group by all
)

select
    coalesce(f.month, o.month) as month,
    coalesce(f.gpu_hours_billed, 0) as gpu_hours_billed,
    coalesce(f.gpu_hours_billed_with_telemetry, 0) as gpu_hours_billed_with_telemetry,
    f.gpu_hours_billed_with_telemetry / nullif(f.gpu_hours_billed, 0) as gpu_hours_telemetry_share,
    f.gpu_cost,
    f.gpu_cost_with_telemetry,
    f.gpu_cost_with_telemetry / nullif(f.gpu_cost, 0) as gpu_cost_telemetry_share,
    coalesce(o.gpu_hours_observed, 0) as gpu_hours_observed,
    coalesce(o.gpus_observed, 0) as gpus_observed,
    coalesce(o.gpu_hours_with_util, 0) as gpu_hours_with_util,
    o.util_mean,
    o.scrape_coverage
from fleet f
full outer join observed o using (month)
