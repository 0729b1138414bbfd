-- Grain: allocation line (allocation_lines: month x team x meter x rule x source group) with an
-- amount: the lines allocation_day splits into details, each with the unit its details state and
-- the quantum of its meter (cfg_meters) the split rounds to. Ephemeral: inlined into its readers.
select a.month, a.team, a.meter, a.rule, a.source_group, a.resource_id, a.amount,
    -- money in its currency; every other meter in its own unit (GPU-hours stay h on a USD bill)
    case when a.unit = 'currency' then a.currency else a.unit end as unit, split_part(a.source_group, '|', 1) as kind,
    (1 / (10::hugeint ** m.quantum_places)::hugeint)::decimal(38, 12) as quantum
from allocation_lines a
join cfg_meters m on m.meter = a.meter
where a.amount <> 0
