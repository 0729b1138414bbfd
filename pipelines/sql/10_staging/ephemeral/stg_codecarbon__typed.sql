-- Grain: one row per data row of emissions.csv (raw_codecarbon), its cells typed and its time
-- placed: CodeCarbon's timestamp is naive local time at the END of the run, read in the zone of
-- the --timezone option (its slot: a literal, or null), else of its region or country
-- (_region_zones, _country_zones), else UTC; timezone_basis says which. The raw text of each
-- checked cell is kept (_ts, _duration...) for the checks of stg_codecarbon__runs.
-- Ephemeral: inlined into the models that read it.
with source as (
    select * from raw_codecarbon
),

zoned as (
    select
        s.*,
        coalesce({{ timezone }}, rz.timezone, zi.timezone, zn.timezone, 'UTC') as tz,
        -- DuckDB's cast to TIMESTAMP silently drops a UTC offset, so a timestamp that carries
        -- one (CodeCarbon writes none; hand-edited files may) is read as the instant it states.
        regexp_matches(trim(s.timestamp), '(Z|[+-]\d{2}:?\d{2})$') as has_offset,
        case
            when regexp_matches(trim(s.timestamp), '(Z|[+-]\d{2}:?\d{2})$') then 'offset_in_timestamp'
            when {{ timezone }} is not null then 'option'
            when rz.zones_in_region = 1 then 'region'
            when rz.zones_in_region > 1 then 'region_multizone'
            when coalesce(zi.zones_in_country, zn.zones_in_country) = 1 then 'country'
            when coalesce(zi.zones_in_country, zn.zones_in_country) > 1 then 'country_multizone'
            else 'assumed_utc'
        end as timezone_basis
    from source s
    left join _country_zones zi on zi.key = upper(trim(s.country_iso_code))
    left join _country_zones zn on zn.key = lower(trim(s.country_name))
    left join _region_zones rz on rz.iso3 = coalesce(zi.iso3, zn.iso3) and rz.key = lower(trim(s.region))
),

typed as (
    select
        row_number,
        nullif(trim(run_id), '') as run_id,
        nullif(trim(project_name), '') as project,
        nullif(trim(experiment), '') as experiment,
        try_cast(trim(timestamp) as timestamp) as local_end,
        num(duration) as duration_s,
        num(cpu_energy) as cpu_energy_kwh,
        num(gpu_energy) as gpu_energy_kwh,
        num(ram_energy) as ram_energy_kwh,
        num(energy_consumed) as energy_kwh,
        num(emissions) as emissions_kg,
        num(emissions_rate) as emissions_rate_kg_per_s,
        num(cpu_power) as cpu_power_w,
        num(gpu_power) as gpu_power_w,
        num(ram_power) as ram_power_w,
        nullif(upper(trim(country_iso_code)), '') as country_iso,
        nullif(trim(country_name), '') as country_name,
        nullif(trim(region), '') as region,
        nullif(trim(cloud_provider), '') as cloud_provider,
        nullif(trim(cloud_region), '') as cloud_region,
        nullif(trim(gpu_model), '') as gpu_model_raw,
        num(gpu_count) as gpu_count,
        -- "8 x NVIDIA H20": CodeCarbon's count of the GPUs it saw. Mixed GPUs are one "N x NAME"
        -- per model, concatenated ("1 x RTX 4060 1 x RTX 3080 Ti"; without the blank in some
        -- releases, "1 x A1 x B"): the GPUs are the sum of every count. A count starts the string
        -- or follows a blank or a letter, so a model number (4060) is not taken for one.
        nullif(list_sum(list_transform(regexp_extract_all(gpu_model, '(?:^|[\sA-Za-z])(\d+)\s*x\s', 1),
                                       lambda n: n::double)), 0) as gpu_count_in_model,
        num(pue) as pue,
        nullif(trim(codecarbon_version), '') as codecarbon_version,
        nullif(trim(tracking_mode), '') as tracking_mode,
        case when has_offset then null else tz end as timezone,
        has_offset,
        timezone_basis,
        -- raw text kept for the checks below
        timestamp as _ts, duration as _duration, energy_consumed as _energy, emissions as _emissions,
        emissions_rate as _rate, cpu_energy as _cpu_e, gpu_energy as _gpu_e, ram_energy as _ram_e,
        cpu_power as _cpu_p, gpu_power as _gpu_p, ram_power as _ram_p, gpu_count as _gpu_n, pue as _pue,
        cpu_model, _fields, _expected_fields, _read_width, _blank_at, _blank_value
    from zoned
)

select
    *,
    case when has_offset then utc_ts(_ts) else timezone(timezone, local_end)::timestamp end as end_utc
from typed
