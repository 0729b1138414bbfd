-- Grain: month x zone x electricity_scope x claim. What a zone's market-based CO2e rests on (the
-- central matching of int_market_claims), for its Scope 2 (owned, colocation) energy and its cloud
-- energy apart (instruments and supplier factors cover Scope 2 energy only): each instrument and supplier factor with its source, year, factor, the
-- volume the month could claim and the energy it covered; the residual mix with its source, year
-- and coefficient id; or the energy nothing covers (not_available). zone is null for an
-- instrument no consumption matched in the month (unmatched) or declared twice (duplicate).
-- excess_kwh: volume the month could claim that no consumption was left for (over-claimed).
select
    month, zone, electricity_scope, claim_kind,
    case when claim_kind = 'duplicate' then instrument_id || ' (declared again, row ' || row_number || ')'
         else coalesce(instrument_id, claim_kind) end as claim,
    instrument_id, instrument_type, declared_zone, origin, origin_path, row_number, source, year, g_per_kwh,
    coefficient_id, consumption_kwh, available_kwh, applied_kwh,
    case when available_kwh is not null then greatest(0, available_kwh - applied_kwh) end as excess_kwh,
    co2e_kg
from int_market_claims
where variant = 'central'
