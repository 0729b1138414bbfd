-- Grain: source group (with its month, kind, category, currency, resource, service, account and
-- resolved team): what the allocation rules look at in a group of int_alloc_sources; kind is
-- charge or energy, basis an energy group's (measured | estimated; int_energy_base spells the
-- group). Ephemeral: inlined into the models that read it.
select distinct month, source_group, split_part(source_group, '|', 1) as kind,
    case when source_group like 'energy|%' then split_part(source_group, '|', 2) end as basis, category, currency,
    resource_id, service_name, account, team
from int_alloc_sources
