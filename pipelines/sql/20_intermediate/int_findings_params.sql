-- Grain: assumption_id. The findings' thresholds and coefficients: assumptions.csv, with the
-- [findings] values of meterbook.toml over the findings_* rows they name.
select a.assumption_id, coalesce(f.value, a.value) as value, a.low, a.high, a.coefficient_id
from ref_assumptions a
left join cfg_findings f on 'findings_' || f.param = a.assumption_id
