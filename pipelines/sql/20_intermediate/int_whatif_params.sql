-- Grain: assumption_id. The what-if replay's parameters: assumptions.csv, with the [whatif]
-- values of meterbook.toml over the whatif_* rows they name.
select a.assumption_id, coalesce(w.value, a.value) as value, a.low, a.high, a.coefficient_id
from ref_assumptions a
left join cfg_whatif w on 'whatif_' || w.param = a.assumption_id
