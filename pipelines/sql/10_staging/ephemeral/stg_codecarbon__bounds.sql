-- Grain: one row per data row of emissions.csv (stg_codecarbon__typed), with the most its
-- declared hardware can draw (max_power_w, PUE included) and the limits its checks read
-- (ref_check_limits; the GPUs' TDP from ref_gpu_specs through _gpu_map).
-- Ephemeral: inlined into the models that read it.
with limits as (
    select
        max(value) filter (where limit_id = 'codecarbon_host_power_max_w') as host_max_w,
        max(value) filter (where limit_id = 'codecarbon_gpus_per_host_max') as gpus_max,
        max(value) filter (where limit_id = 'power_max_fraction_of_tdp') as tdp_fraction_max,
        max(value) filter (where limit_id = 'pue_max') as pue_max,
        max(value) filter (where limit_id = 'codecarbon_energy_parts_tolerance_fraction') as parts_tol,
        max(value) filter (where limit_id = 'codecarbon_energy_parts_tolerance_kwh') as parts_tol_kwh,
        (select max(value) from ref_gpu_specs where metric = 'tdp_w') as tdp_max_w
    from ref_check_limits
),

resolved as (
    -- the most the declared hardware can draw, PUE included: host + GPUs at TDP; a row that
    -- declares no GPU at all is bounded by the largest host (one tracker measures one machine)
    select
        c.*,
        m.model as gpu_model,
        greatest(coalesce(c.gpu_count, 0), coalesce(c.gpu_count_in_model, 0)) as gpus,
        c.gpu_count is null and c.gpu_count_in_model is null and c.gpu_model_raw is null as no_gpu_declared,
        l.host_max_w,
        coalesce(s.value, l.tdp_max_w) * l.tdp_fraction_max as gpu_max_w,
        l.gpus_max, l.tdp_max_w * l.tdp_fraction_max as any_gpu_max_w,
        least(greatest(coalesce(c.pue, 1), 1), l.pue_max) as pue_bound, l.pue_max,
        l.parts_tol, l.parts_tol_kwh
    from stg_codecarbon__typed c
    cross join limits l
    left join _gpu_map m on m.raw = c.gpu_model_raw
    left join ref_gpu_specs s on s.gpu_model = m.model and s.metric = 'tdp_w'
)

select
    *,
    (host_max_w + case when no_gpu_declared then gpus_max * any_gpu_max_w else gpus * gpu_max_w end)
        * pue_bound as max_power_w
from resolved
