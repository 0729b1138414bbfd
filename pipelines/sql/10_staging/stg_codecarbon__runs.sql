-- CodeCarbon emissions.csv -> runs. Input: temp table raw_codecarbon (text cells under canonical
-- names, row_number, the row's field count, the first cell under a blank header name),
-- _country_zones (key -> ISO3, IANA zone), _region_zones (ISO3 x region key -> IANA zone: US
-- states, Canadian provinces), _gpu_map (gpu_model text -> canonical id), ref_gpu_specs and
-- ref_check_limits. Grain: one row per data row. {{ timezone }} is the --timezone option as a
-- literal, or null.
-- CodeCarbon's timestamp is naive local time at the END of the run; energies are kWh with PUE
-- already applied (never apply it again). In its default append mode CodeCarbon writes the
-- run's running totals again at every flush under the same run_id: `run_key` names the run a
-- row is a snapshot of (run_month counts each key once, by its last snapshot).
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
),

converted as (
    select
        *,
        case when has_offset then utc_ts(_ts) else timezone(timezone, local_end)::timestamp end as end_utc
    from typed
),

limits as (
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
    from converted c
    cross join limits l
    left join _gpu_map m on m.raw = c.gpu_model_raw
    left join ref_gpu_specs s on s.gpu_model = m.model and s.metric = 'tdp_w'
),

bounded as (
    select
        *,
        (host_max_w + case when no_gpu_declared then gpus_max * any_gpu_max_w else gpus * gpu_max_w end)
            * pue_bound as max_power_w,
        -- snapshots of one run share run_id, project and hardware; a run_id written with other
        -- ones is another run (kept apart, and said)
        concat_ws('|', coalesce(project, ''), coalesce(experiment, ''), coalesce(gpu_model_raw, ''),
                  coalesce(trim(cpu_model), ''), coalesce(trim(_gpu_n), ''), coalesce(country_iso, ''),
                  coalesce(region, ''), coalesce(cloud_provider, ''), coalesce(cloud_region, '')) as identity
    from resolved
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
    from bounded
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
),

keyed as (
    -- totals that go down are no snapshots of one run: each row of that run_id is a run
    select
        *,
        case when bool_or(decreases) over (partition by snapshot_key)
             then snapshot_key || ':' || row_number::varchar else snapshot_key end as run_key
    from ordered
)

select
    row_number, run_id, run_key, project, experiment,
    -- try: an infinite or huge duration (a reject below) must not stop the file
    try(end_utc - to_seconds(duration_s)) as start_utc,
    end_utc, duration_s, cpu_energy_kwh, gpu_energy_kwh, ram_energy_kwh, energy_kwh, emissions_kg,
    emissions_rate_kg_per_s, cpu_power_w, gpu_power_w, ram_power_w, country_iso, country_name, region,
    cloud_provider, cloud_region, gpu_model_raw, gpu_model, gpu_count, gpu_count_in_model,
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
        cast_err('ram_energy', _ram_e, ram_energy_kwh, 'number'),
        finite_err('duration', _duration, duration_s),
        finite_err('energy_consumed', _energy, energy_kwh),
        finite_err('emissions', _emissions, emissions_kg),
        finite_err('cpu_energy', _cpu_e, cpu_energy_kwh),
        finite_err('gpu_energy', _gpu_e, gpu_energy_kwh),
        finite_err('ram_energy', _ram_e, ram_energy_kwh),
        case when isfinite(energy_kwh) and isfinite(duration_s) and duration_s > 0 and energy_kwh * 3600000 / duration_s > max_power_w then
            {'column_name': 'energy_consumed', 'check_name': 'power_within_hardware', 'value': left(_energy, 200),
             'message': 'energy_consumed over duration is ' || round(energy_kwh * 3600 / duration_s, 1)::varchar
                        || ' kW on average, more than the declared hardware can draw ('
                        || round(max_power_w / 1000, 1)::varchar || ' kW: '
                        || case when no_gpu_declared then 'the largest host'
                                else gpus::bigint::varchar || ' GPU(s) at TDP and the host' end
                        || ', PUE ' || pue_bound::varchar || ')'
                        || case when energy_kwh * 3600 / duration_s <= max_power_w
                                then '; energy written in Wh? (kWh expected)' else '' end}
        end,
        -- a host holds so many GPUs and a facility has so much overhead; the power bound above
        -- would otherwise grow with any count or PUE written
        case when gpus > gpus_max then
            {'column_name': 'gpu_count', 'check_name': 'gpus_within_host', 'value': left(coalesce(_gpu_n, gpu_model_raw), 200),
             'message': gpus::varchar || ' GPUs on one tracked machine, more than a host holds (' || gpus_max::varchar || ')'}
        end,
        case when pue > pue_max then
            {'column_name': 'pue', 'check_name': 'pue_within_limits', 'value': left(_pue, 200),
             'message': 'PUE ' || pue::varchar || ' is above any facility''s (' || pue_max::varchar || ')'}
        end,
        case when isfinite(duration_s) and end_utc is not null and try(end_utc - to_seconds(duration_s)) is null then
            {'column_name': 'duration', 'check_name': 'window_within_calendar', 'value': left(_duration, 200),
             'message': 'the run would start before any date a timestamp can hold'}
        end,
        case when _blank_at is not null then
            {'column_name': 'column ' || _blank_at::varchar || ' (no name)', 'check_name': 'value_under_blank_header',
             'value': left(_blank_value, 200),
             'message': 'a value under a header with no name: a record run into this one (a lost line break?)'}
        end
    ]) as _errors,
    -- descriptive columns: a bad cell leaves the run's energy and emissions in, that field null
    errors([
        cast_err('emissions_rate', _rate, emissions_rate_kg_per_s, 'number'),
        cast_err('cpu_power', _cpu_p, cpu_power_w, 'number'),
        cast_err('gpu_power', _gpu_p, gpu_power_w, 'number'),
        cast_err('ram_power', _ram_p, ram_power_w, 'number'),
        cast_err('gpu_count', _gpu_n, gpu_count, 'number'),
        cast_err('pue', _pue, pue, 'number'),
        case when run_id_reused then
            {'column_name': 'run_id', 'check_name': 'run_id_other_hardware', 'value': run_id,
             'message': 'run_id also written with another project, experiment or hardware in this file: '
                        || 'those rows are other runs, counted apart'}
        end,
        case when decreases then
            {'column_name': case when duration_s < lag_duration then 'duration'
                                 when energy_kwh < lag_energy then 'energy_consumed' else 'emissions' end,
             'check_name': 'snapshots_decrease', 'value': run_id,
             'message': 'running totals lower than at row ' || prev_row::varchar
                        || ' of the same run_id: no snapshots of one run, each row counted as its own run'}
        end,
        case when abs(coalesce(cpu_energy_kwh, 0) + coalesce(gpu_energy_kwh, 0) + coalesce(ram_energy_kwh, 0) - energy_kwh)
                  > greatest(parts_tol * energy_kwh, parts_tol_kwh)
              and abs(coalesce(cpu_energy_kwh, 0) + coalesce(gpu_energy_kwh, 0) + coalesce(ram_energy_kwh, 0)
                      - energy_kwh / pue_bound) > greatest(parts_tol * energy_kwh, parts_tol_kwh)
              and coalesce(cpu_energy_kwh, gpu_energy_kwh, ram_energy_kwh) is not null then
            {'column_name': 'energy_consumed', 'check_name': 'energy_parts_sum', 'value': left(_energy, 200),
             'message': 'cpu_energy + gpu_energy + ram_energy = '
                        || (coalesce(cpu_energy_kwh, 0) + coalesce(gpu_energy_kwh, 0) + coalesce(ram_energy_kwh, 0))::varchar
                        || ' kWh, not energy_consumed (implausible; energy_consumed is counted)'}
        end,
        case when gpu_count = 0 and gpu_energy_kwh > 0 then
            {'column_name': 'gpu_count', 'check_name': 'gpu_energy_without_gpu', 'value': left(_gpu_n, 200),
             'message': 'gpu_count is 0 but gpu_energy is ' || gpu_energy_kwh::varchar
                        || ' kWh (implausible; energy_consumed is counted)'}
        end
    ]) as _notes
from keyed
