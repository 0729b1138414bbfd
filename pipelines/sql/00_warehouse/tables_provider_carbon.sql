-- What the clouds themselves report as the carbon footprint of an account: AWS Data Exports'
-- CARBON_EMISSIONS table and Google Cloud's Carbon Footprint export, one row per provider row,
-- in kg CO2e whatever unit the file wrote (AWS writes metric tonnes, MTCO2e). The provider's
-- model version is kept: a figure is only comparable with one of the same methodology.
create table if not exists provider_carbon (
    file_id                  integer not null,
    row_number               bigint not null,
    provider                 varchar not null,   -- aws | gcp
    usage_month              varchar not null,   -- YYYY-MM of the usage period
    account_id               varchar not null,   -- AWS usage_account_id; Google project.id (billing account where no project)
    payer_account_id         varchar,            -- AWS payer_account_id; Google billing_account_id
    service                  varchar not null,   -- AWS product_code; Google service.description
    region                   varchar,            -- AWS region_code; Google location.region (null: global)
    location                 varchar,            -- AWS location; Google location.location
    co2e_location_kg         double,             -- location-based total (AWS total_lbm_emissions; Google ..._total_kgCO2e.location_based)
    co2e_market_kg           double,             -- market-based total
    co2e_scope1_kg           double,
    co2e_scope2_location_kg  double,
    co2e_scope2_market_kg    double,
    co2e_scope3_kg           double,
    model_version            varchar not null    -- the provider's carbon methodology version
);
