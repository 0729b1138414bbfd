-- Charges with their team (first configured tag key present wins) and their month.
-- Variables: tag_keys (list, priority order), unallocated (team name for untagged spend).
select
    c.*,
    coalesce(
        list_filter(list_transform(getvariable('tag_keys'), lambda k: c.tags[k]), lambda v: v is not null and v <> '')[1],
        getvariable('unallocated')
    ) as team,
    strftime(coalesce(c.billing_period_start, c.charge_period_start), '%Y-%m') as month,
    lower(c.provider) || ':' || c.region as zone
from charges c
