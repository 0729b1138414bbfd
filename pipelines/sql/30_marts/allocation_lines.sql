-- Grain: month x team x meter x rule x source group. Every source group's amount of every meter
-- (int_alloc_sources) is split over its targets (int_alloc_targets) by largest remainder in
-- whole quanta of the meter (cfg_meters: a cent, a watt-hour, a gram, 1/1000 GPU-hour); ties
-- break by team then rule, so reruns give the same cents. The source's own sub-quantum residue
-- stays on the line with the largest share. Hence, per source group and meter, exactly:
-- sum(amount) = source amount (DECIMAL(38, 12)); the sign of a line is the sign of its source.
with joined as (
    select s.month, s.source_group, s.category, s.currency, s.resource_id, s.meter, m.unit,
        s.amount, t.team, t.rule, t.weight,
        sign(s.amount) as sgn,
        -- whole quanta of |amount| (exact: a DECIMAL times a power of ten, floored)
        floor(abs(s.amount) * (10::hugeint ** m.quantum_places)::hugeint)::hugeint as units_total,
        (1 / (10::hugeint ** m.quantum_places)::hugeint)::decimal(38, 12) as quantum,
        t.weight / sum(t.weight::decimal(38, 12)) over (partition by s.source_group, s.meter)::double as share
    from int_alloc_sources s
    join int_alloc_targets t using (source_group)
    join cfg_meters m on m.meter = s.meter
),

floored as (
    select *,
        floor(units_total::double * share)::hugeint as base_units,
        units_total::double * share - floor(units_total::double * share) as frac,
        count(*) over g as n_targets,
        row_number() over (partition by source_group, meter order by units_total::double * share - floor(units_total::double * share) desc, team asc, rule asc) as rank_frac,
        row_number() over (partition by source_group, meter order by share desc, team asc, rule asc) as rank_share
    from joined
    window g as (partition by source_group, meter)
),

balanced as (
    select *,
        -- quanta left after flooring: normally 0 <= left < n; the general form also absorbs a
        -- float rounding slip in the shares without breaking the sum
        units_total - sum(base_units) over (partition by source_group, meter) as left_units
    from floored
),

rounded as (
    select *,
        base_units + floor(left_units::double / n_targets)::hugeint
            + case when rank_frac <= left_units - floor(left_units::double / n_targets)::hugeint * n_targets then 1 else 0 end
            as units
    from balanced
)

select
    month, team, meter, unit, currency, rule, category, source_group, resource_id,
    (sgn * (units * quantum
            + case when rank_share = 1 then abs(amount) - units_total * quantum else 0 end))::decimal(38, 12) as amount,
    amount as source_amount,
    share
from rounded
