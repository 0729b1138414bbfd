-- The split cost allocation rows of one CUR file against their parent instance's lines, per
-- parent and hour: pods whose parent is not in the file (their split cannot be checked here;
-- the delivery's other parts may hold it), and pods whose split and unused costs do not add up
-- to the parent's amortized cost within {{ tolerance }} of it (assumptions.csv
-- split_sum_tolerance_fraction). Findings, not rejects: the rows add nothing to the bill either
-- way. Input: _lines (charges shape), _rejects. Output: stg_billing__findings' shape.
with lines as (
    select s.* from _lines s anti join (select distinct row_number from _rejects) r using (row_number)
),

parents as (
    select resource_id, charge_period_start, sum(effective_cost) as parent_cost
    from lines
    where split_parent_id is null and resource_id is not null and charge_category = 'Usage'
        and coalesce(line_item_type, '') <> 'SavingsPlanNegation'
    group by all
),

splits as (
    select split_parent_id, charge_period_start, min(row_number) as first_row, count(*) as n_rows,
        sum(split_cost + coalesce(split_unused_cost, 0)) as split_total
    from lines
    where split_parent_id is not null
    group by all
),

flagged as (
    select s.first_row, s.n_rows, 'split_parent_missing' as finding, s.split_parent_id as example,
        'split cost allocation rows whose parent instance line is not in this file: not checked here, '
        || 'and allocated only where the warehouse holds the parent' as message
    from splits s
    anti join parents p on p.resource_id = s.split_parent_id and p.charge_period_start = s.charge_period_start
    union all
    select s.first_row, s.n_rows, 'split_sum_differs_from_parent',
        s.split_parent_id || ': ' || s.split_total::varchar || ' vs ' || p.parent_cost::varchar,
        'the split and unused costs of a parent instance''s pods do not add up to its amortized cost in the hour '
        || '(sources/reference/assumptions.csv split_sum_tolerance_fraction): the provider_split follows their shares'
    from splits s
    join parents p on p.resource_id = s.split_parent_id and p.charge_period_start = s.charge_period_start
    where abs(s.split_total - p.parent_cost) > {{ tolerance }} * abs(p.parent_cost)
)

select finding, sum(n_rows) as rows, min(first_row) as first_row, arg_min(example, first_row) as example,
    arg_min(message, first_row) as message
from flagged
group by finding
