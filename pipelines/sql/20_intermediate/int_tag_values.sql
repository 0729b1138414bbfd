-- Grain: one row per distinct tag value outside ASCII, from the charges' tags and the
-- provider splits' allocated tags. Only these can change under Unicode NFKC, which neither
-- engine has: int_name_folds folds them in Python (core.text.team_name), and the teams join it.
with tag_values as (
    select unnest(map_values(tags)) as raw from charges
    union
    select unnest(map_values(allocated_tags)) as raw from focus_allocations
)

select distinct raw
from tag_values
where regexp_matches(raw, '[^\x00-\x7f]')
