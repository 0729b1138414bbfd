-- Grain: one CodeCarbon run (run_key), dated by the month of its end (UTC): the runs the footprint
-- audit matches to hosts and audits on their own measured GPU energy, the what-if and the
-- scaling fits read. CodeCarbon's append mode writes a run's running totals again at every
-- flush, so a run is its last snapshot (the largest totals; the same snapshot in two files
-- counts once, from the file loaded first), spanning from its first snapshot's start to its
-- end. file_id and row_number locate that last snapshot; `snapshots` counts the rows behind it.
-- Rows loaded before run_key existed are each a run of their own.
with keyed as (
    select *, coalesce(run_key, file_id::varchar || ':' || row_number::varchar) as k
    from runs
),

ranked as (
    select
        *,
        row_number() over (partition by k
                           order by duration_s desc, energy_kwh desc, emissions_kg desc, end_utc desc,
                                    file_id asc, row_number asc) as pick,
        count(*) over (partition by k) as snapshots,
        first_value(start_utc) over (partition by k order by end_utc, file_id, row_number) as first_start_utc
    from keyed
)

select
    strftime(end_utc, '%Y-%m') as month,
    file_id, row_number, run_id, project, first_start_utc as start_utc, end_utc, duration_s,
    cpu_energy_kwh, gpu_energy_kwh, ram_energy_kwh, energy_kwh, emissions_kg,
    country_iso, cloud_provider, cloud_region, gpu_model, gpu_count, gpu_count_in_model, pue, snapshots
from ranked
where pick = 1
