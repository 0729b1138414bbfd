-- Carbon inputs beyond the reference tables: hourly grid intensity series and the contractual
-- instruments and supplier factors a user declares for market-based Scope 2. Like every fact
-- table, each row keeps its file (file_id -> source_files) and its 1-based data row.

-- One hourly (or finer) grid carbon intensity of one zone, as a grid-hourly file gives it. An
-- Electricity Maps row carries two figures (direct and life-cycle): two lines, one row number.
create table if not exists grid_hours (
    file_id              integer not null,
    row_number           bigint not null,
    zone                 varchar not null,     -- as the file names it: an Electricity Maps zone, an operator code, or aws:us-east-1
    hour_start           timestamp not null,   -- UTC start of the interval the figure is for
    factor_type          varchar not null,     -- direct | lifecycle | unspecified (a plain file without a basis column)
    intensity_g_per_kwh  double not null,
    carbon_free_pct      double,               -- Electricity Maps' low-carbon / CFE share, 0-100
    renewable_pct        double,
    data_source          varchar,
    estimated            boolean,              -- Electricity Maps' "Data estimated"
    estimation_method    varchar
);

-- One contractual instrument (PPA, REC, GO, I-REC) or supplier-specific emission factor.
-- period_end is exclusive (a file's inclusive end date plus one day). volume_mwh null: a supplier
-- factor without a volume, which covers whatever consumption in its zone nothing before it covers.
create table if not exists instruments (
    file_id          integer not null,
    row_number       bigint not null,
    instrument_id    varchar not null,
    instrument_type  varchar not null,     -- ppa | vppa | rec | go | i-rec | eac | green_tariff | supplier
    zone             varchar not null,     -- a meterbook zone, grid zone, operator code or country (the market)
    period_start     timestamp not null,
    period_end       timestamp not null,
    volume_mwh       double,
    g_per_kwh        double not null,      -- the instrument's emission factor (0 for renewable certificates)
    source           varchar not null,     -- registry, certificate or contract reference
    vintage_year     integer,
    notes            varchar
);
