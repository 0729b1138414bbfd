-- Google Cloud Carbon Footprint export -> provider_carbon. Input: temp view raw_gcp_carbon with
-- canonical names (usage_month, billing_account_id, project_id, service, region, location,
-- scope1, scope2_location, scope2_market, scope3, total_location, total_market,
-- carbon_model_version) and _fields, read from the export's documented field paths
-- (project.id, carbon_footprint_kgCO2e.scope1, carbon_footprint_total_kgCO2e.location_based...).
-- Grain: one row per data row. Figures are kg CO2e as Google writes them; a row without a
-- project (Google leaves project.id null for usage tied to no project) stays on its billing account.
with source as (
    select * from raw_gcp_carbon
),

typed as (
    select
        row_number,
        'gcp' as provider,
        strftime(utc_ts(usage_month), '%Y-%m') as usage_month,
        coalesce(nullif(trim(project_id), ''), nullif(trim(billing_account_id), '')) as account_id,
        nullif(trim(billing_account_id), '') as payer_account_id,
        coalesce(nullif(trim(service), ''), 'unspecified') as service,
        nullif(trim(region), '') as region,
        nullif(trim(location), '') as location,
        num(total_location) as co2e_location_kg,
        num(total_market) as co2e_market_kg,
        num(scope1) as co2e_scope1_kg,
        num(scope2_location) as co2e_scope2_location_kg,
        num(scope2_market) as co2e_scope2_market_kg,
        num(scope3) as co2e_scope3_kg,
        nullif(trim(carbon_model_version), '') as model_version,
        usage_month as _month, total_location as _loc, total_market as _mkt, scope1 as _s1,
        scope2_location as _s2l, scope2_market as _s2m, scope3 as _s3, _fields
    from source
)

select
    * exclude (_month, _loc, _mkt, _s1, _s2l, _s2m, _s3, _fields),
    errors([
        cast_err('usage_month', _month, usage_month, 'timestamp'),
        case when coalesce(trim(_month), '') = '' then {'column_name': 'usage_month', 'check_name': 'not_nullable',
             'value': null::varchar, 'message': 'usage_month is empty'} end,
        finite_err('carbon_footprint_total_kgCO2e.location_based', _loc, co2e_location_kg),
        finite_err('carbon_footprint_total_kgCO2e.market_based', _mkt, co2e_market_kg),
        case when account_id is null then {'column_name': 'billing_account_id', 'check_name': 'not_nullable', 'value': null::varchar,
             'message': 'neither project.id nor billing_account_id is given'} end,
        case when model_version is null then {'column_name': 'carbon_model_version', 'check_name': 'not_nullable',
             'value': null::varchar, 'message': 'carbon_model_version is empty: a figure without its model version cannot be compared'} end,
        cast_err('carbon_footprint_total_kgCO2e.location_based', _loc, co2e_location_kg, 'number'),
        cast_err('carbon_footprint_total_kgCO2e.market_based', _mkt, co2e_market_kg, 'number'),
        cast_err('carbon_footprint_kgCO2e.scope1', _s1, co2e_scope1_kg, 'number'),
        cast_err('carbon_footprint_kgCO2e.scope2.location_based', _s2l, co2e_scope2_location_kg, 'number'),
        cast_err('carbon_footprint_kgCO2e.scope2.market_based', _s2m, co2e_scope2_market_kg, 'number'),
        cast_err('carbon_footprint_kgCO2e.scope3', _s3, co2e_scope3_kg, 'number'),
        case when least(co2e_location_kg, co2e_market_kg, co2e_scope1_kg, co2e_scope2_location_kg, co2e_scope2_market_kg,
                        co2e_scope3_kg) < 0
             then {'column_name': 'carbon_footprint_total_kgCO2e.location_based', 'check_name': 'not_negative',
                   'value': left(_loc, 200), 'message': 'emissions cannot be negative'} end,
        case when co2e_location_kg is null and co2e_scope2_location_kg is null
             then {'column_name': 'carbon_footprint_total_kgCO2e.location_based', 'check_name': 'not_nullable',
                   'value': null::varchar, 'message': 'the row gives no location-based figure'} end
    ]) as _errors,
    errors([short_row_note(_fields)]) as _notes
from typed
