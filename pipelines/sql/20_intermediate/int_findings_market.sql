-- Grain: month x finding x subject, in the shape of findings_month (which unions it in): the
-- market-based basis's instruments and the energy no market factor covers.
--   instrument_overclaimed  value = kWh of an instrument's volume for the month that no
--                       consumption was left for in the zones it names (not claimed: Scope 2
--                       Quality Criteria); energy_kwh = what it did cover
--   instrument_unmatched    value = the month's part of an instrument's volume, no Scope 2
--                       consumption in any zone it names (a misspelled zone, a market with no
--                       GPUs, or only cloud GPUs: their electricity is the provider's to claim)
--   instrument_duplicate    value = kWh of a second declaration of an instrument id (claimed once)
--   market_factor_missing   value = kWh of a zone's facility energy that no instrument, supplier
--                       factor or residual mix covers: its market-based CO2e is not available
--   supplier_factor_unmatched  value = kWh of cloud energy in the zones a meterbook.toml supplier
--                       factor names, which it cannot cover; the factor names no Scope 2 energy,
--                       so it applies to nothing this month (int_supplier_reach)
-- The instrument findings are of declared instruments (files); meterbook.toml's supplier factors
-- carry no volume, so only their reach is a finding.
select month, 'instrument_overclaimed' as finding, claim as subject, null::varchar as resource_id, null::varchar as team,
    dsum(excess_kwh) as value, 'kWh' as unit, null::double as low, null::double as high, null::double as cost_usd,
    dsum(applied_kwh) as energy_kwh,
    printf('%s (%s, %s) offers %.1f kWh for the month in %s; consumption left it %.1f kWh: the rest is not claimed',
           pick(instrument_id), pick(instrument_type), pick(source), dsum(available_kwh),
           string_agg(zone, ', ' order by zone), dsum(applied_kwh)) as detail,
    []::varchar[] as assumption_ids
from market_basis_month
where claim_kind in ('instrument', 'supplier') and origin = 'instruments file'
group by month, claim
having dsum(excess_kwh) > 1e-9 * greatest(1, dsum(available_kwh))
union all
select month, 'instrument_' || claim_kind, claim, null, null, available_kwh, 'kWh', null, null, null, 0,
    case claim_kind
        when 'unmatched' then printf('%s (%s, %s): no owned or colocation (Scope 2) consumption this month in zone %s; name a zone, grid zone, operator code or country where the organisation''s own GPUs draw energy (a cloud provider''s electricity is not the organisation''s to claim instruments for)',
                                     instrument_id, instrument_type, source, declared_zone)
        else printf('%s is declared again (%s row %d): an instrument is claimed once', instrument_id, coalesce(origin_path, origin), row_number)
    end,
    []::varchar[]
from market_basis_month
where claim_kind in ('unmatched', 'duplicate') and origin = 'instruments file'
union all
select month, 'market_factor_missing', zone, null, null, uncovered_kwh, 'kWh', null, null, null, uncovered_kwh,  -- noqa: AL08
    market_reason, []::varchar[]
from carbon_month
where market_status = 'not available'
union all
select month, 'supplier_factor_unmatched', claim, null, null, cloud_kwh, 'kWh', null, null, null, 0,  -- noqa: AL08
    case when cloud_kwh > 0 then
        printf('meterbook.toml''s supplier factor for %s (%.1f g/kWh, %s) applies to no energy this month: the %.1f kWh in %s are cloud GPUs'' electricity, the provider''s to claim, so they take the residual mix (supplier factors and instruments cover owned and colocation energy only). Remove the factor, or declare those GPUs colocation or on-premises in [scopes] if the organisation buys their electricity',
               declared_zone, g_per_kwh, source, cloud_kwh, cloud_zones)
    else
        printf('meterbook.toml''s supplier factor for %s (%.1f g/kWh, %s) applies to no energy this month: no owned or colocation GPUs drew energy in a zone it names. Name the zone, grid zone, operator code or country where they do',
               declared_zone, g_per_kwh, source)
    end,
    []::varchar[]
from int_supplier_reach
where scope2_kwh = 0
