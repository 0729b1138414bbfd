-- CodeCarbon emissions.csv -> runs. Input: temp table raw_codecarbon (text cells under canonical
-- names, row_number, the row's field count, the first cell under a blank header name),
-- _country_zones (key -> ISO3, IANA zone), _region_zones (ISO3 x region key -> IANA zone: US
-- states, Canadian provinces), _gpu_map (gpu_model text -> canonical id), ref_gpu_specs and
-- ref_check_limits. Grain: one row per data row. {{ timezone }} is the --timezone option as a
-- literal, or null.
-- CodeCarbon's timestamp is naive local time at the END of the run; energies are kWh with PUE
-- already applied (never apply it again). The rows come typed and placed in time
-- (stg_codecarbon__typed), bounded by their declared hardware (stg_codecarbon__bounds) and keyed
-- by the run they are snapshots of (stg_codecarbon__snapshots); here, their checks: an error
-- rejects the row (_errors), a note keeps it with that field null (_notes).
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
from stg_codecarbon__snapshots
