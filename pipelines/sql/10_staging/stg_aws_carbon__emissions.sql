-- AWS Data Exports CARBON_EMISSIONS -> provider_carbon. Input: temp view raw_aws_carbon with the
-- documented column names (usage_period_start, usage_period_end, payer_account_id,
-- usage_account_id, product_code, region_code, location, total_lbm_emissions_value/_unit,
-- total_mbm_emissions_value/_unit, model_version) and _fields. Grain: one row per data row.
-- AWS writes metric tonnes (MTCO2e); stored in kg ({{ kg_per_t }} kg a tonne). A unit other
-- than MTCO2e is a reject: a figure in an unknown unit is never guessed at.
with source as (
    select * from raw_aws_carbon
),

typed as (
    select
        row_number,
        'aws' as provider,
        strftime(utc_ts(usage_period_start), '%Y-%m') as usage_month,
        nullif(trim(usage_account_id), '') as account_id,
        nullif(trim(payer_account_id), '') as payer_account_id,
        coalesce(nullif(trim(product_code), ''), 'unspecified') as service,
        nullif(trim(region_code), '') as region,
        nullif(trim(location), '') as location,
        num(total_lbm_emissions_value) * {{ kg_per_t }} as co2e_location_kg,
        num(total_mbm_emissions_value) * {{ kg_per_t }} as co2e_market_kg,
        nullif(trim(model_version), '') as model_version,
        usage_period_start as _start, total_lbm_emissions_value as _lbm, total_mbm_emissions_value as _mbm,
        upper(trim(coalesce(total_lbm_emissions_unit, 'MTCO2e'))) as _lbm_unit,
        upper(trim(coalesce(total_mbm_emissions_unit, 'MTCO2e'))) as _mbm_unit,
        _fields
    from source
)

select
    * exclude (_start, _lbm, _mbm, _lbm_unit, _mbm_unit, _fields),
    errors([
        cast_err('usage_period_start', _start, usage_month, 'timestamp'),
        case when coalesce(trim(_start), '') = '' then {'column_name': 'usage_period_start', 'check_name': 'not_nullable',
             'value': null::varchar, 'message': 'usage_period_start is empty'} end,
        finite_err('total_lbm_emissions_value', _lbm, co2e_location_kg),
        finite_err('total_mbm_emissions_value', _mbm, co2e_market_kg),
        case when account_id is null then {'column_name': 'usage_account_id', 'check_name': 'not_nullable', 'value': null::varchar,
             'message': 'usage_account_id is empty: export the table with its account columns'} end,
        case when model_version is null then {'column_name': 'model_version', 'check_name': 'not_nullable', 'value': null::varchar,
             'message': 'model_version is empty: a figure without its methodology version cannot be compared'} end,
        cast_err('total_lbm_emissions_value', _lbm, co2e_location_kg, 'number'),
        cast_err('total_mbm_emissions_value', _mbm, co2e_market_kg, 'number'),
        case when _lbm_unit <> 'MTCO2E' then {'column_name': 'total_lbm_emissions_unit', 'check_name': 'is_mtco2e',
             'value': left(_lbm_unit, 200), 'message': 'the unit is not MTCO2e (metric tonnes CO2e), the one AWS documents'} end,
        case when _mbm_unit <> 'MTCO2E' then {'column_name': 'total_mbm_emissions_unit', 'check_name': 'is_mtco2e',
             'value': left(_mbm_unit, 200), 'message': 'the unit is not MTCO2e (metric tonnes CO2e), the one AWS documents'} end,
        case when co2e_location_kg < 0 or co2e_market_kg < 0 then {'column_name': 'total_lbm_emissions_value',
             'check_name': 'not_negative', 'value': left(coalesce(_lbm, _mbm), 200), 'message': 'emissions cannot be negative'} end
    ]) as _errors,
    errors([short_row_note(_fields)]) as _notes
from typed
