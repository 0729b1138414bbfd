-- Grain: month x basis x tier. Where the month's IT energy comes from; the rows sum to the
-- month's IT energy in team_month. basis 'measured': a GPU-hour's energy by its tier (counter,
-- counter_gap, power_integral) less what was estimated inside it; basis 'estimated': the part of
-- GPU-hours estimated over telemetry gaps (gap_estimate), and billed GPU-hours no telemetry
-- covers, from TDP (tdp_model, int_energy_lines); a Slurm job no telemetry reaches, from its DCGM
-- job statistics (dcgm_job_stats, measured) or Slurm's node energy (slurm_node_energy).
with telemetry as (
    select strftime(hour_start, '%Y-%m') as month, energy_tier, energy_kwh, estimated_kwh
    from int_gpu_hours
    where energy_kwh is not null
),

tiers as (
    select month, 'measured' as basis, energy_tier as tier, dsum(energy_kwh - estimated_kwh) as it_energy_kwh
    from telemetry group by all
    union all
    select month, 'estimated', 'gap_estimate', dsum(estimated_kwh)
    from telemetry group by all having dsum(estimated_kwh) > 0
    union all
    -- billed GPU-hours no telemetry covers: rated power, or a Slurm job's own records
    select month, basis, tiers[1], dsum(it_energy_kwh)
    from int_energy_lines where tiers[1] in ('tdp_model', 'dcgm_job_stats', 'slurm_node_energy') group by all
)

select month, basis, tier, it_energy_kwh
from tiers
where it_energy_kwh <> 0
