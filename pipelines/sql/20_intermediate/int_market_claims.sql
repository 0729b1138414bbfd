-- Grain: month x zone x electricity scope x variant x claim. Market-based Scope 2 (GHG Protocol
-- Scope 2 Guidance, Quality Criteria): which declared instrument covers how much of a zone's
-- facility energy in a month, and the residual mix for the rest. variant: the consumption it is
-- worked out for (central, low, high facility energy), so a range is the same matching at each end.
-- electricity_scope: the scope of the energy's hardware (int_resource_ownership): 'Scope 2' for
-- owned or colocation equipment, whose electricity the organisation buys; a cloud instance's
-- ('Scope 3, category 1') is the provider's electricity.
-- Declared: instruments files (PPAs, RECs, GOs, I-RECs; supplier factors) and meterbook.toml's
-- supplier factors (legacy per-zone factors have no volume, source or year).
-- The criteria, as applied:
--   whose    the organisation's instruments and supplier factors can only be claimed for the
--            electricity it purchases and consumes (Scope 2 Guidance, ch. 7): Scope 2 energy. A
--            cloud instance's electricity is the provider's, claimed with the provider's
--            instruments, so cloud energy gets what a zone without instruments gets (the residual
--            mix), even in a zone or grid that owned energy shares
--   market   an instrument covers a zone when its zone names it: the zone itself, its grid zone,
--            operator code or country (int_zone_factors); one declared for several zones is
--            shared over them by their Scope 2 consumption
--   period   its volume is spread evenly over its period; a month may claim the part it holds
--            (never another month's: a month's figures do not depend on other months)
--   once     an instrument id declared twice for a month is claimed once (the first by file hash
--            and row); the others are findings (instrument_duplicate)
--   order    certificates and contracts first, then supplier factors, then the residual mix;
--            within a rank by period start, id; no claim beyond the consumption left
-- claim_kind: instrument | supplier | residual_mix | not_available (energy no claim covers and no
-- residual mix for the zone); and, zone null, unmatched (a month the instrument's period covers
-- has no Scope 2 consumption in any zone it names) and duplicate (variant central only). A claim
-- without a volume (a supplier factor) takes all that is left.
with consumption as (
    select b.month, b.zone, o.electricity_scope, dsum(b.facility_energy_kwh) as central,
        dsum(b.facility_energy_kwh_low) as low, dsum(b.facility_energy_kwh_high) as high
    from int_energy_base b
    inner join int_resource_ownership o on o.month = b.month and coalesce(o.resource_id, '') = coalesce(b.resource_id, '')
    where b.zone is not null
    group by b.month, b.zone, o.electricity_scope
),

variants as (
    unpivot consumption on central, low, high into name variant value consumption_kwh
),

declared as (
    select 'instruments file' as origin, f.path as origin_path, f.sha256, i.row_number, i.instrument_id, i.instrument_type,
        i.zone as declared_zone, i.period_start, i.period_end, i.volume_mwh * 1000 as volume_kwh, i.g_per_kwh, i.source,
        i.vintage_year, case when i.instrument_type in ('supplier', 'green_tariff') then 2 else 1 end as rank
    from instruments i
    join source_files f on f.file_id = i.file_id and f.status = 'loaded'
    union all
    select 'meterbook.toml', null, null, c.ord + 1, 'config:' || c.zone, 'supplier', c.zone, null, null, null,
        c.g_per_kwh, c.source, c.year, 2
    from cfg_supplier_factors c
),

months as (
    select distinct month, strptime(month, '%Y-%m') as m0, strptime(month, '%Y-%m') + interval 1 month as m1 from consumption
),

monthly as (
    -- the part of an instrument's volume that falls in the month (all of it, for one without a period)
    select o.*, m.month,
        case when o.period_start is null then 1.0
             else (epoch(least(o.period_end, m.m1)) - epoch(greatest(o.period_start, m.m0)))
                  / (epoch(o.period_end) - epoch(o.period_start)) end as month_fraction
    from declared o
    join months m on o.period_start is null or (o.period_start < m.m1 and o.period_end > m.m0)
),

once as (
    -- twice declared within the month: an id reused for another period (another month's file)
    -- is not a duplicate of this month's, so loading it leaves this month as it was
    select *, row_number() over (partition by lower(instrument_id), month order by sha256 nulls first, row_number) > 1
        as duplicate
    from monthly
),

matched as (
    -- Scope 2 consumption only (whose, above)
    select mo.*, c.zone, c.electricity_scope, c.central as zone_kwh,
        c.central / nullif(sum(c.central::decimal(38, 12)) over (partition by mo.instrument_id, mo.month), 0)::double
            as zone_share
    from (select * from once where not duplicate) mo
    join int_zone_factors z on names_zone(mo.declared_zone, z.zone, z.grid_zone, z.operator_code, z.country)
    join consumption c on c.month = mo.month and c.zone = z.zone and c.electricity_scope = 'Scope 2'
),

claims as (
    select m.*, v.variant, v.consumption_kwh,
        m.volume_kwh * m.month_fraction * coalesce(m.zone_share, 0) as available_kwh
    from matched m
    join variants v on v.month = m.month and v.zone = m.zone and v.electricity_scope = m.electricity_scope
),

filled as (
    select *,
        coalesce(sum(available_kwh::decimal(38, 12)) over w, 0)::double as before_kwh,
        coalesce(count(*) filter (where available_kwh is null) over w, 0) as unlimited_before
    from claims
    window w as (partition by month, zone, electricity_scope, variant order by rank, period_start nulls last, instrument_id, sha256, row_number
                 rows between unbounded preceding and 1 preceding)
),

applied as (
    select *,
        case when unlimited_before > 0 then 0
             else greatest(0, least(coalesce(available_kwh, consumption_kwh), consumption_kwh - before_kwh)) end as applied_kwh
    from filled
),

rest as (
    select v.month, v.zone, v.electricity_scope, v.variant, v.consumption_kwh,
        greatest(0, v.consumption_kwh - coalesce(dsum(a.applied_kwh), 0)) as left_kwh
    from variants v
    left join applied a using (month, zone, electricity_scope, variant)
    group by v.month, v.zone, v.electricity_scope, v.variant, v.consumption_kwh
)

select month, zone, electricity_scope, variant, case rank when 1 then 'instrument' else 'supplier' end as claim_kind, instrument_id,
    instrument_type, declared_zone, origin, origin_path, row_number, source, vintage_year as year, g_per_kwh,
    -- a range end's factor is the claim's own: an instrument's figure is its contract's
    g_per_kwh as g_per_kwh_end, null::varchar as coefficient_id,
    consumption_kwh, available_kwh, applied_kwh, applied_kwh * g_per_kwh / getvariable('g_per_kg') as co2e_kg
from applied
union all
select r.month, r.zone, r.electricity_scope, r.variant, case when z.residual_g_per_kwh is null then 'not_available' else 'residual_mix' end,
    null, null, null, 'sources/reference/grid_intensity.csv', null, null, z.residual_source, z.residual_year,
    z.residual_g_per_kwh,
    case r.variant when 'low' then z.residual_g_per_kwh_low when 'high' then z.residual_g_per_kwh_high
         else z.residual_g_per_kwh end,
    z.residual_id, r.consumption_kwh, null, r.left_kwh,
    r.left_kwh * case r.variant when 'low' then z.residual_g_per_kwh_low when 'high' then z.residual_g_per_kwh_high
                      else z.residual_g_per_kwh end / getvariable('g_per_kg')
from rest r
left join int_zone_factors z on z.zone = r.zone
where r.left_kwh > 0
union all
select mo.month, null, null, 'central', case when mo.duplicate then 'duplicate' else 'unmatched' end, mo.instrument_id,
    mo.instrument_type, mo.declared_zone, mo.origin, mo.origin_path, mo.row_number, mo.source, mo.vintage_year,
    mo.g_per_kwh, mo.g_per_kwh as g_per_kwh_end, null, null, mo.volume_kwh * mo.month_fraction, 0, 0
from once mo
where mo.duplicate or not exists (select 1 from matched m where m.instrument_id = mo.instrument_id and m.month = mo.month)
