-- Row patterns in staged charges that are legal but suspicious, and the field notes of loaded rows
-- (_row_findings: a tag that did not parse, a short row). One row per finding with the count,
-- the first row number and an example value. Input: _lines (charges shape), _rejects, _row_findings, _tag_folds;
-- {{ line_item_key }} is the column identifying a line item where the format has one (CUR).
with lines as (
    select s.*, {{ line_item_key }} as _key from _lines s anti join (select distinct row_number from _rejects) r using (row_number)
),

-- Hash first, then compare the keys themselves: a 64-bit hash shortlists the candidates at the
-- cost of one integer group-by, and the exact group-by runs only on those (normally none).
repeated_keys as (
    -- the subquery reads lines again in its own scope: not a duplicate alias
    select _key from lines  -- noqa: AL04
    where hash(_key) in (select hash(_key) from lines where _key is not null group by hash(_key) having count(*) > 1)
    group by _key having count(*) > 1
),

-- _tag_folds: each tag value outside ASCII with its team (core.text.team_name: NFKC is not SQL)
tag_cells as (
    select c.row_number, c.raw, case when f.raw is null then team_name(c.raw) else f.team end as team
    from (select row_number, unnest(map_values(tags)) as raw from lines) c
    left join _tag_folds f on f.raw = c.raw
),

-- the checks of one line, all in one pass over the lines: each failing check a (finding, example, message)
line_checks as (
    select l.row_number, unnest(errors([
        case when l.charge_category = 'Usage' and l.billed_cost <> 0 and l.effective_cost = 0
                and coalesce(l.line_item_type, '') not in ('SavingsPlanNegation') then
            {'finding': 'billed_without_effective', 'example': l.billed_cost::varchar,
             'message': 'Usage with BilledCost <> 0 but EffectiveCost = 0: amortized cost missing or the export is inconsistent'} end,
        case when l.charge_category = 'Usage' and l.charge_class is null and (l.consumed_quantity < 0 or l.billed_cost < 0)
                and coalesce(l.line_item_type, '') not in ('SavingsPlanNegation') then
            {'finding': 'negative_usage', 'example': coalesce(l.consumed_quantity::varchar, l.billed_cost::varchar),
             'message': 'Usage line with negative quantity or cost, not marked as a credit or correction'} end,
        case when l.charge_category = 'Credit' and l.effective_cost <> l.billed_cost then
            {'finding': 'credit_effective_differs', 'example': l.billed_cost::varchar || ' vs ' || l.effective_cost::varchar,
             'message': 'Credit whose EffectiveCost differs from BilledCost (FOCUS says they must match)'} end,
        -- Billing periods are calendar months in every format we read. A day of slack each side
        -- absorbs GCP's invoice month (America/Los_Angeles); Correction lines restate earlier periods.
        case when l.billing_period_start is not null and coalesce(l.charge_class, '') <> 'Correction'
                and (l.charge_period_start < l.billing_period_start - interval 1 day
                     or l.charge_period_start >= l.billing_period_start + interval 1 month + interval 1 day) then
            {'finding': 'outside_billing_period', 'example': strftime(l.charge_period_start, '%Y-%m-%dT%H:%M:%SZ'),
             'message': 'charge period starts outside its billing period (a month from the billing period start) and is not a correction'} end,
        case when not regexp_full_match(l.billing_currency, '[A-Z]{3}') then
            {'finding': 'currency_not_iso4217', 'example': l.billing_currency,
             'message': 'currency code is not three letters (ISO 4217): the export may be a test or sandbox one; totals stay apart per code'} end,
        case when l.gpu_model is null and regexp_matches(l.instance_type,
                '^(ml\.)?(p[0-9]+[a-z-]*|g[0-9]+[a-z]*|gr[0-9]+)\.|^standard_n[cdv]|^(a2|a3|a4|g2)-|^gpu:') then
            {'finding': 'unknown_gpu_instance_type', 'example': l.instance_type,
             'message': 'instance type looks like a GPU family but is not in sources/reference/instance_types.csv; GPU-hours not counted'} end
    ])) as f
    from lines l
),

flagged as (
    select distinct on (f.row_number, f.check_name) f.row_number, f.check_name as finding, f.value as example, f.message
    from _row_findings f anti join (select distinct row_number from _rejects) r using (row_number)
    union all
    select row_number, f.finding, f.example, f.message
    from line_checks
    union all
    -- kept, not dropped: the billed total must still equal the file's; the finding says by how much it may be inflated
    select lines.row_number, 'duplicate_line_item', _key,
           'the same line item (identity/LineItemId in one identity/TimeInterval) appears more than once; the export may count it twice'
    from lines semi join repeated_keys using (_key)
    union all
    -- the value as it was (control characters included): the team is named by its folded form
    select row_number, 'invisible_in_tag', arg_min(raw, raw),
           'a tag value holds invisible, bidi or control characters, or compatibility forms (fullwidth letters, '
           || 'ligatures): teams and file names use its folded form'
    from tag_cells where raw <> coalesce(team, '')
    group by row_number
)

select finding, count(*) as rows, min(row_number) as first_row, arg_min(example, row_number) as example, arg_min(message, row_number) as message
from flagged
group by finding
