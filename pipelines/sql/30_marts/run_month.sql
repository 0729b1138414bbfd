-- Grain: one CodeCarbon run (file, row), dated by the month of its end (UTC). The runs the
-- footprint audit matches to hosts and audits on their own measured GPU energy; the runs table
-- as loaded, with its month, so the report reads a mart.
select
    strftime(end_utc, '%Y-%m') as month,
    file_id, row_number, run_id, project, start_utc, end_utc, duration_s,
    cpu_energy_kwh, gpu_energy_kwh, ram_energy_kwh, energy_kwh, emissions_kg,
    country_iso, cloud_provider, cloud_region, gpu_model, gpu_count, gpu_count_in_model, pue
from runs
