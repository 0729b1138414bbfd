-- Grain: month x finding x subject, in the shape of findings_month (which unions it in): the bill
-- against telemetry, and against the invoices.
--   gpu_hours_gap       billed vs telemetry GPU-hours of a resource beyond the tolerance
--   unmatched_host      telemetry whose host maps to no resource billed in the month
--   unobserved_resource billed GPU-hours of a resource no telemetry maps to
--   invoice_difference  a loaded invoice the chargeback does not reconcile to (reconciliation):
--                       value = allocated - invoiced in the invoice's currency (unit), cost_usd
--                       the amount at stake (its absolute value)
with tol as (
    select value as tol, [coefficient_id] as ids from int_findings_params where assumption_id = 'reconciliation_gap_tolerance_fraction'
),

observed as (
    -- telemetry per month and host, with the billed resource int_gpu_workloads resolved for it;
    -- decimal sums (dsum): a double sum's last digits follow the row order, and a finding printed
    -- 4.8 GPU-h or 4.9 when another month was loaded first
    select strftime(hour_start, '%Y-%m') as month, host, resource_id, pick(resource_match) as resource_match,
        dsum(gpu_hours_observed) as gpu_hours, dsum(energy_kwh) as energy_kwh
    from int_gpu_workloads
    group by all
),

billed as (
    select month, resource_id, mode_det(list(resolved_team)) as team, coalesce(dsum(gpu_hours), 0) as gpu_hours,
        sum(effective_cost)::double as cost_usd
    from int_charges_teams
    where resource_id is not null
    group by all
),

bill_vs_telemetry as (
    -- each billed resource next to the telemetry mapped to it (hosts = 0: none at all)
    select b.month, b.resource_id, b.team, b.gpu_hours as billed_h, b.cost_usd,
        coalesce(dsum(o.gpu_hours), 0) as observed_h, count(o.month) as hosts
    from billed b
    left join observed o on o.month = b.month and o.resource_id = b.resource_id
    group by all
)

select u.month, 'gpu_hours_gap' as finding, u.resource_id as subject, u.resource_id, null::varchar as team,
    u.billed_h - u.observed_h as value, 'h' as unit, null::double as low, null::double as high, null::double as cost_usd,
    null::double as energy_kwh, printf('billed %.1f GPU-h, telemetry %.1f GPU-h', u.billed_h, u.observed_h) as detail,
    tol.ids as assumption_ids
from bill_vs_telemetry u cross join tol
where u.hosts > 0 and abs(u.billed_h - u.observed_h) > tol.tol * greatest(u.billed_h, u.observed_h)
union all
-- telemetry with energy in the month that joins no charge of the month: it splits no charge
-- between teams, and its energy falls back to the default zone. The resolved id is part of the
-- subject: a host re-launched within the month is seen under two ids, and hosts without a label
-- differ only by it
select o.month, 'unmatched_host', coalesce(o.host, 'no host label') || coalesce(' (' || o.resource_id || ')', ''), o.resource_id,
    null, o.gpu_hours, 'h', null, null, null, o.energy_kwh,
    case when o.resource_id is null
         then 'no billed resource for this host: map it in [hosts] of meterbook.toml or label its series with the instance id'
         else printf('%s (from %s) has no charge this month: check the id, map the host in [hosts] of meterbook.toml or label its series with the instance id',
                     o.resource_id, case o.resource_match when 'hosts' then '[hosts]' when 'label' then 'its instance id label'
                                         else 'its host name' end) end,
    []::varchar[]
from observed o
where o.energy_kwh > 0
    and not exists (select 1 from billed b where b.month = o.month and b.resource_id = o.resource_id)
union all
-- billed GPU capacity that no telemetry maps to, in a month that has telemetry (a month with none
-- is not instrumented at all: Energy by source then shows every kWh as tdp_model)
select u.month, 'unobserved_resource', u.resource_id, u.resource_id, u.team, u.billed_h, 'h', null, null, u.cost_usd, null,  -- noqa: AL08
    'billed GPU-hours with no telemetry, energy estimated from TDP: if its host is scraped, map it in [hosts] of meterbook.toml or label its series with the instance id',
    []::varchar[]
from bill_vs_telemetry u
where u.hosts = 0 and u.billed_h > 0 and u.month in (select month from observed)
union all
select month, 'invoice_difference', invoice_id, null, null, difference::double, currency, null, null, abs(difference)::double, null,
    case when status = 'no export lines'
         then printf('invoice %s of %s %s (%s %.2f) matches no export line of the month: ingest the export it covers, or check its id, billing account and period',
                     invoice_id, coalesce(issuer, 'an unnamed issuer'), coalesce(billing_account_id, ''), currency, invoice_amount::double)
         else printf('invoice %s: %s %.2f invoiced, %.2f in %d export lines, %.2f allocated to teams; the exports are missing or restating lines, or the invoice was typed wrong',
                     invoice_id, currency, invoice_amount::double, export_billed_cost::double, lines, allocated_billed_cost::double) end,
    []::varchar[]
from reconciliation
where basis = 'invoice' and status <> 'reconciled'
