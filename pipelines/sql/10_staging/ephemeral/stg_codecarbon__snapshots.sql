-- Grain: one row per data row of emissions.csv (stg_codecarbon__bounds), with the run it is a
-- snapshot of. In its default append mode CodeCarbon writes the run's running totals again at
-- every flush under the same run_id: `run_key` names the run a row is a snapshot of (run_month
-- counts each key once, by its last snapshot). Ephemeral: inlined into the models that read it.
with identified as (
    select
        *,
        -- snapshots of one run share run_id, project and hardware; a run_id written with other
        -- ones is another run (kept apart, and said)
        concat_ws('|', coalesce(project, ''), coalesce(experiment, ''), coalesce(gpu_model_raw, ''),
                  coalesce(trim(cpu_model), ''), coalesce(trim(_gpu_n), ''), coalesce(country_iso, ''),
                  coalesce(region, ''), coalesce(cloud_provider, ''), coalesce(cloud_region, '')) as identity
    from stg_codecarbon__bounds
),

snapshots as (
    -- a row without run_id is its own run, the same content being the same run wherever it is
    -- read (another folder, CRLF, gzip)
    select
        *,
        md5(case when run_id is not null then 'run|' || run_id || '|' || identity
                 else 'row|' || identity || '|' || concat_ws('|', trim(_ts), trim(_duration), trim(_energy), trim(_emissions))
            end) as snapshot_key,
        run_id is not null and count(distinct identity) over (partition by run_id) > 1 as run_id_reused
    from identified
),

ordered as (
    select
        *,
        lag(row_number) over w as prev_row,
        lag(duration_s) over w as lag_duration,
        lag(energy_kwh) over w as lag_energy,
        coalesce(duration_s < lag(duration_s) over w or energy_kwh < lag(energy_kwh) over w
                 or emissions_kg < lag(emissions_kg) over w, false) as decreases
    from snapshots
    window w as (partition by snapshot_key order by end_utc, row_number)
)

select
    *,
    -- totals that go down are no snapshots of one run: each row of that run_id is a run
    case when bool_or(decreases) over (partition by snapshot_key)
         then snapshot_key || ':' || row_number::varchar else snapshot_key end as run_key
from ordered
