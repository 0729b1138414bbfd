-- A FOCUS input's columns as written, one map per loaded row (FOCUS 1.2 names and x_ columns;
-- empty and NULL cells are null), keyed like charges by file and row. `charges` keeps what the
-- pipeline computes with; this keeps the rest, so `export focus` can carry every column the
-- input had through unchanged without widening every model. Only FOCUS files write here.
create table if not exists charge_source_columns (
    file_id     integer not null,
    row_number  bigint not null,
    columns     map(varchar, varchar)
);
