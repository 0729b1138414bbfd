-- CodeCarbon emissions.csv -> runs. Input: temp table raw_codecarbon (text cells under canonical
-- names, row_number, the row's field count), _country_zones (key -> ISO3, IANA zone) and
-- _region_zones (ISO3 x region key -> IANA zone: US states, Canadian provinces). Grain: one
-- row per data row. {{ timezone }} is the --timezone option as a literal, or null.
-- CodeCarbon's timestamp is naive local time at the END of the run; energies are kWh with PUE
-- already applied (never apply it again).
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
        _fields, _expected_fields, _read_width
    from zoned
),

converted as (
    select
        *,
        case when has_offset then utc_ts(_ts) else timezone(timezone, local_end)::timestamp end as end_utc
    from typed
)

select
    row_number, run_id, project, experiment,
    end_utc - to_seconds(duration_s) as start_utc,
    end_utc, duration_s, cpu_energy_kwh, gpu_energy_kwh, ram_energy_kwh, energy_kwh, emissions_kg,
    emissions_rate_kg_per_s, cpu_power_w, gpu_power_w, ram_power_w, country_iso, country_name, region,
    cloud_provider, cloud_region, gpu_model_raw,
    null::varchar as gpu_model,    -- resolved by the reader from the alias catalog
    gpu_count, gpu_count_in_model,
    coalesce(gpu_count <> gpu_count_in_model, false) as gpu_count_mismatch,
    pue, codecarbon_version, tracking_mode, timezone, timezone_basis,
    errors([
        case when _fields <> _expected_fields then
            {'column_name': null::varchar, 'check_name': 'field_count',
             'value': _fields::varchar || case when _fields = _read_width then '+' else '' end,
             'message': 'row has ' || case when _fields = _read_width then 'more than ' || (_fields - 1)::varchar
                                           else _fields::varchar end
                        || ' fields, its header has ' || _expected_fields::varchar}
        end,
        -- Excel shows a timestamp as mm:ss.0 and saves it so; the date is gone.
        case when _ts is not null and trim(_ts) <> '' and local_end is null then
            {'column_name': 'timestamp', 'check_name': 'parses_as_timestamp', 'value': left(_ts, 200),
             'message': 'timestamp is not a valid timestamp'
                        || case when regexp_full_match(trim(_ts), '\d{1,2}:\d{2}(\.\d+)?')
                                then ' (Excel mm:ss.0 display format: the date is lost; use the CSV as CodeCarbon wrote it)'
                                else '' end}
        end,
        cast_err('duration', _duration, duration_s, 'number'),
        cast_err('energy_consumed', _energy, energy_kwh, 'number'),
        cast_err('emissions', _emissions, emissions_kg, 'number'),
        cast_err('cpu_energy', _cpu_e, cpu_energy_kwh, 'number'),
        cast_err('gpu_energy', _gpu_e, gpu_energy_kwh, 'number'),
        cast_err('ram_energy', _ram_e, ram_energy_kwh, 'number')
    ]) as _errors,
    -- descriptive columns: a bad cell leaves the run's energy and emissions in, that field null
    errors([
        cast_err('emissions_rate', _rate, emissions_rate_kg_per_s, 'number'),
        cast_err('cpu_power', _cpu_p, cpu_power_w, 'number'),
        cast_err('gpu_power', _gpu_p, gpu_power_w, 'number'),
        cast_err('ram_power', _ram_p, ram_power_w, 'number'),
        cast_err('gpu_count', _gpu_n, gpu_count, 'number'),
        cast_err('pue', _pue, pue, 'number')
    ]) as _notes
from converted
