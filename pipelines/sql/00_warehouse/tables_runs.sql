-- Runs measured by CodeCarbon and footprints published in model reports. Like every fact table,
-- each row keeps its file (file_id -> source_files) and its 1-based data row in that file.
-- Timestamps are UTC without a zone; `timezone` and `timezone_basis` say how local time was read.

-- One CodeCarbon run (one data row of emissions.csv). Energies are kWh as CodeCarbon wrote
-- them, PUE already applied by CodeCarbon (`pue` is kept to undo it, never applied again).
create table if not exists runs (
    file_id                   integer not null,
    row_number                bigint not null,
    run_id                    varchar,
    project                   varchar,
    experiment                varchar,
    start_utc                 timestamp,
    end_utc                   timestamp not null,
    duration_s                double not null,
    cpu_energy_kwh            double,
    gpu_energy_kwh            double,
    ram_energy_kwh            double,
    energy_kwh                double not null,
    emissions_kg              double not null,
    emissions_rate_kg_per_s   double,
    cpu_power_w               double,
    gpu_power_w               double,
    ram_power_w               double,
    country_iso               varchar,
    country_name              varchar,
    region                    varchar,
    cloud_provider            varchar,
    cloud_region              varchar,
    gpu_model_raw             varchar,      -- as written: "8 x NVIDIA H20"
    gpu_model                 varchar,      -- canonical id (gpu_specs), null when unresolved
    gpu_count                 double,       -- CodeCarbon's gpu_count column (from gpu_ids when given)
    gpu_count_in_model        double,       -- the N of "N x NAME" in gpu_model_raw
    gpu_count_mismatch        boolean not null,
    pue                       double,
    codecarbon_version        varchar,
    tracking_mode             varchar,
    timezone                  varchar,      -- IANA zone the naive timestamp was read in (null: offset given)
    timezone_basis            varchar not null  -- offset_in_timestamp | option | region | region_multizone | country | country_multizone | assumed_utc
);

-- One accounting of a published model report (disclosure YAML document or HF model card).
-- Units as in the disclosure format: MWh, tonnes CO2e, W per accelerator, g/kWh.
create table if not exists disclosures (
    file_id                          integer not null,
    row_number                       bigint not null,
    model                            varchar not null,
    source                           varchar not null,
    params                           double,
    active_params                    double,
    tokens                           double,
    accelerator                      varchar,
    accelerator_count                double,
    accelerator_hours                double,
    training_days                    double,
    power_w                          double,
    power_basis                      varchar,
    pue                              double,
    energy_scope                     varchar,
    location                         varchar,
    grid_gco2e_per_kwh               double,
    energy_mwh                       double,
    co2e_location_t                  double,
    co2e_market_t                    double,
    cost_usd                         double,
    price_usd_per_accelerator_hour   double,
    -- extensions the reconstruct engine reads (not yet in design.md's list)
    facility_type                    varchar,      -- pue.csv facility_type
    precision                        varchar,      -- gpu_specs peak_flops_<precision>
    market_gco2e_per_kwh             double,
    findings                         varchar[] not null   -- plausibility findings, empty when none
);

-- Each number as written in the file ('1.1e9', '400.0'), beside its DOUBLE: the printed precision
-- is a rounding interval the audit carries, and a DOUBLE keeps no trailing zeros or exponent.
-- Model cards: the card's digits re-expressed in the column's unit ('1710e-6' t for 1710 g).
-- Added by ALTER, not in the CREATE above, so a warehouse made before them gains the same
-- columns in the same order; its older rows keep null (the audit says so).
alter table disclosures add column if not exists params_text varchar;
alter table disclosures add column if not exists active_params_text varchar;
alter table disclosures add column if not exists tokens_text varchar;
alter table disclosures add column if not exists accelerator_count_text varchar;
alter table disclosures add column if not exists accelerator_hours_text varchar;
alter table disclosures add column if not exists training_days_text varchar;
alter table disclosures add column if not exists power_w_text varchar;
alter table disclosures add column if not exists pue_text varchar;
alter table disclosures add column if not exists grid_gco2e_per_kwh_text                varchar;
alter table disclosures add column if not exists energy_mwh_text varchar;
alter table disclosures add column if not exists co2e_location_t_text                   varchar;
alter table disclosures add column if not exists co2e_market_t_text                     varchar;
alter table disclosures add column if not exists cost_usd_text varchar;
alter table disclosures add column if not exists price_usd_per_accelerator_hour_text varchar;
alter table disclosures add column if not exists market_gco2e_per_kwh_text              varchar;

-- Extensions for reconstruction (issue 16): who ran the facility, the training year and the
-- reporter's convention; by ALTER, so older warehouses gain them with null.
alter table disclosures add column if not exists operator varchar;
alter table disclosures add column if not exists year double;
alter table disclosures add column if not exists convention varchar;
alter table disclosures add column if not exists year_text varchar;

-- The run a CodeCarbon row is a snapshot of (CodeCarbon's append mode writes the running totals
-- again at every flush): run_month counts each key once, by its last snapshot. By ALTER, so an
-- older warehouse gains it; its rows keep null and each stays a run of its own.
alter table runs add column if not exists run_key varchar;

-- The kind of work (pre-training, fine-tuning, inference): selects the board-power prior.
alter table disclosures add column if not exists workload varchar;
