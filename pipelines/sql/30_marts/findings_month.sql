-- Grain: month x finding x subject. What deserves a look, with the money or GPU-hours at stake.
-- value/low/high are in `unit`; cost_usd is the spend concerned (or saving, see finding) in the
-- billing currency; energy_kwh the measured energy concerned (telemetry findings);
-- assumption_ids name the coefficient rows used (sources/reference).
--   low_utilization     a busy GPU with more than low_util_min_hours hours under low_util_threshold
--   requested_idle      per pod (namespace/pod): GPU-hours it held under a GPU request
--                       (kube-state-metrics) while its GPU was under low_util_threshold, and
--                       their cost at the resource's rate
--   idle_gpu_hours      per billed resource: GPU time with no workload and its effective cost
--                       cost_usd = the cost of its unused share, hours x rate x (1 - utilization)
--   commitment_candidate, spot_candidate, owned_break_even: buying alternatives for a material
--                       on-demand resource, cost_usd = what each saves (int_purchase_options)
--   gpu_hours_gap       billed vs telemetry GPU-hours of a resource beyond the tolerance
--   unmatched_host      telemetry whose host maps to no resource billed in the month
--   unobserved_resource billed GPU-hours of a resource no telemetry maps to
--                       (these three compare the bill with telemetry: bill_vs_telemetry)
--   energy_gap          a CodeCarbon run's GPU energy (its PUE undone) vs DCGM energy of the
--                       busy GPUs of the same model over the run's window, when exactly as many
--                       such GPUs were busy as the run used (otherwise the run is not matchable)
--   scaling_efficiency  value = E(K) at the GPU count used; detail has K* (int_scaling_fits)
--   energy_above_board  value = kWh a GPU's readings put above TDP x board_power_tolerance in
--                       its hours of the month: cut off, not charged (gpu_hours.sql)
--   telemetry_gap       value = unobserved hours of a GPU in the month that a counter gap
--                       spans; energy_kwh = what was spread over them, low/high the range of
--                       the part estimated after a reset inside a gap
--   low_mfu             a training job of the work log (job_month) whose MFU is below
--                       findings_low_mfu_threshold: value/low/high = its MFU and range; cost_usd
--                       = the money at stake, its cost x (1 - MFU / mfu_typical), what reaching a
--                       typical large run's MFU would have saved (range in the detail)
--   instrument_overclaimed  value = kWh of an instrument's volume for the month that no
--                       consumption was left for in the zones it names (not claimed: Scope 2
--                       Quality Criteria); energy_kwh = what it did cover
--   instrument_unmatched    value = the month's part of an instrument's volume, no consumption in
--                       any zone it names (a misspelled zone, or a market with no GPUs)
--   instrument_duplicate    value = kWh of a second declaration of an instrument id (claimed once)
--   market_factor_missing   value = kWh of a zone's facility energy that no instrument, supplier
--                       factor or residual mix covers: its market-based CO2e is not available
--   provider_split_differs  AWS's split of a node's pods vs telemetry's (int_provider_split_findings)
--   invoice_difference  a loaded invoice the chargeback does not reconcile to (reconciliation):
--                       value = allocated - invoiced in the invoice's currency (unit), cost_usd
--                       the amount at stake (its absolute value)
with param as (
    select assumption_id, value, low, high, coefficient_id from int_findings_params
),

owned as (
    -- the resources of owned clusters' cost pools (int_cost_pool_lines)
    select distinct resource_id from int_charges_teams where provider = 'owned' and resource_id is not null
),

thr as (
    select
        (select value from param where assumption_id = 'findings_low_util_threshold') as util,
        (select value from param where assumption_id = 'findings_low_util_min_hours') as min_h,
        (select value from param where assumption_id = 'reconciliation_gap_tolerance_fraction') as tol,
        (select value from param where assumption_id = 'findings_low_mfu_threshold') as low_mfu
),

resource_rate as (
    select month, resource_id, sum(effective_cost)::double / nullif(dsum(gpu_hours), 0) as usd_per_gpu_h
    from int_charges_teams where gpu_hours > 0 group by all
),

low_util as (
    select strftime(w.hour_start, '%Y-%m') as month, w.host, w.gpu_uuid, w.resource_id,
        mode_det(list(coalesce(w.team, getvariable('unallocated')))) as team,
        dsum(w.gpu_hours_observed) as hours, dsum(w.gpu_hours_observed * w.util_mean) / dsum(w.gpu_hours_observed) as util
    from int_gpu_workloads w cross join thr
    where not w.is_idle and w.util_mean < thr.util
    group by all
),

requested as (
    -- pod-hours that held a GPU request: nvidia.com/gpu, a MIG or a HAMi resource
    select distinct hour_start, namespace, pod
    from gpu_request_parts
    where kind = 'request' and resource_key(resource) like 'nvidia_com_%' and value_sum > 0
),

requested_idle as (
    select strftime(w.hour_start, '%Y-%m') as month, w.namespace || '/' || w.pod as subject, pick(w.resource_id) as resource_id,
        mode_det(list(coalesce(w.team, getvariable('unallocated')))) as team, dsum(w.gpu_hours_observed) as hours
    from int_gpu_workloads w
    join requested q on q.hour_start = w.hour_start and q.namespace = w.namespace and q.pod = w.pod
    cross join thr
    where w.util_mean < thr.util
    group by strftime(w.hour_start, '%Y-%m'), w.namespace, w.pod
),

run_overlap as (
    select r.file_id, r.row_number, r.project, r.run_id, r.start_utc, r.end_utc, r.gpu_count,
        r.gpu_energy_kwh / coalesce(nullif(r.pue, 0), 1) as run_kwh,
        count(distinct g.gpu_uuid) as gpus,
        dsum(g.energy_kwh * (1 - w.idle_share)
            * (epoch(least(g.hour_start + interval 1 hour, r.end_utc)) - epoch(greatest(g.hour_start, r.start_utc)))
            / (epoch(g.hour_start + interval 1 hour) - epoch(g.hour_start))) as tel_kwh
    from run_month r
    join gpu_hours g on g.hour_start < r.end_utc and g.hour_start + interval 1 hour > r.start_utc
    join ref_gpu_aliases al on al.alias = g.gpu_model_raw and al.gpu_model = r.gpu_model
    join (select gpu_uuid, hour_start, coalesce(sum(share::decimal(38, 12)) filter (where is_idle), 0)::double as idle_share
          from int_gpu_workloads group by all) w using (gpu_uuid, hour_start)
    where r.start_utc is not null and r.gpu_energy_kwh > 0 and w.idle_share < 1
    group by all
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
),

unmatched_hosts as (
    -- telemetry with energy in the month that joins no charge of the month: it splits no
    -- charge between teams, and its energy falls back to the default zone
    -- the resolved id is part of the subject: a host re-launched within the month is seen under
    -- two ids, and hosts without a label differ only by it
    select o.month, 'unmatched_host' as finding,
        coalesce(o.host, 'no host label') || coalesce(' (' || o.resource_id || ')', '') as subject, o.resource_id,
        null::varchar as team, o.gpu_hours as value, 'h' as unit, null::double as low, null::double as high,
        null::double as cost_usd, o.energy_kwh,
        case when o.resource_id is null
             then 'no billed resource for this host: map it in [hosts] of meterbook.toml or label its series with the instance id'
             else printf('%s (from %s) has no charge this month: check the id, map the host in [hosts] of meterbook.toml or label its series with the instance id',
                         o.resource_id, case o.resource_match when 'hosts' then '[hosts]' when 'label' then 'its instance id label'
                                             else 'its host name' end) end as detail,
        []::varchar[] as assumption_ids
    from observed o
    where o.energy_kwh > 0
        and not exists (select 1 from billed b where b.month = o.month and b.resource_id = o.resource_id)
),

gpu_month as (
    select strftime(g.hour_start, '%Y-%m') as month, coalesce(g.host, 'no host label') || '/' || g.gpu_uuid as subject,
        pick(w.resource_id) as resource_id,
        dsum(g.excess_kwh) as excess_kwh,
        count(*) filter (where g.excess_kwh > 0) as excess_hours,
        dsum(g.gap_kwh) as gap_kwh,
        sum((g.energy_kwh - g.energy_kwh_low)::decimal(38, 12)) filter (where g.gap_kwh > 0)::double as gap_below_kwh,
        sum((g.energy_kwh_high - g.energy_kwh)::decimal(38, 12)) filter (where g.gap_kwh > 0)::double as gap_above_kwh,
        dsum(least(g.estimated_kwh, g.gap_kwh)) as gap_estimated_kwh,
        sum((g.energy_coverage - g.coverage)::decimal(38, 12)) filter (where g.gap_kwh > 0)::double as gap_h,
        max(g.gap_s) filter (where g.gap_kwh > 0) as longest_gap_s
    from gpu_hours g
    left join (select distinct gpu_uuid, hour_start, resource_id from int_gpu_workloads) w using (gpu_uuid, hour_start)
    group by all
),

telemetry_findings as (
    select month, 'energy_above_board' as finding, subject, resource_id, null::varchar as team,
        excess_kwh as value, 'kWh' as unit, null::double as low, null::double as high, null::double as cost_usd,
        excess_kwh as energy_kwh,
        printf('%d GPU-hours read more than the board can draw (TDP x tolerance): %.3f kWh not charged; check the counter and the labels that name this GPU',
               excess_hours, excess_kwh) as detail,
        ['assumptions:board_power_tolerance'] as assumption_ids
    from gpu_month where excess_kwh > 0
    union all
    select month, 'telemetry_gap', subject, resource_id, null, gap_h, 'h', null, null, null, gap_kwh,
        printf('%.3f kWh of counter energy spread over %.1f unobserved hours (longest gap %.1f h)%s', gap_kwh, gap_h,
               longest_gap_s / 3600, case when gap_estimated_kwh > 0
               then printf('; %.3f kWh estimated after a counter reset inside a gap (range -%.3f/+%.3f kWh)',
                           gap_estimated_kwh, gap_below_kwh, gap_above_kwh) else '' end),
        []::varchar[]
    from gpu_month where gap_kwh > 0
),

job_mfu as (
    -- a job's MFU over all its rows of the month (teams, currencies): work over GPU-seconds at peak
    select month, job_id, mode_det(list(team)) as team, sum(effective_cost) as cost,
        osum(work_flops) / nullif(osum(available_flop), 0) as mfu,
        osum(work_flops) / nullif(osum(available_flop_high), 0) as mfu_low,
        osum(work_flops) / nullif(osum(available_flop_low), 0) as mfu_high,
        max(tensor_active_mean) as tensor_active_mean, dsum(gpu_hours) as gpu_hours, string_agg(distinct gpu_models, ', ' order by gpu_models) as gpu_models
    from job_month
    where workload = 'training' and work_flops is not null and available_flop > 0
    group by all
),

low_mfu_jobs as (
    select j.month, 'low_mfu' as finding, j.job_id as subject, null::varchar as resource_id, j.team,
        j.mfu as value, 'fraction' as unit, j.mfu_low as low, j.mfu_high as high,
        j.cost * greatest(0, 1 - j.mfu / c.typ) as cost_usd, null::double as energy_kwh,
        printf('MFU %.1f%% on %.0f GPU-hours of %s (threshold %.0f%%%s); at a typical large run''s %.0f%%, %.0f of its %.0f cost would have been saved (%.0f-%.0f)',
               100 * j.mfu, j.gpu_hours, coalesce(j.gpu_models, 'unknown GPUs'), 100 * thr.low_mfu,
               coalesce(printf('; DCGM tensor-pipe activity %.0f%%', 100 * j.tensor_active_mean), ''),
               100 * c.typ, j.cost * greatest(0, 1 - j.mfu / c.typ), j.cost,
               j.cost * greatest(0, 1 - j.mfu / c.typ_low), j.cost * greatest(0, 1 - j.mfu / c.typ_high)) as detail,
        ['assumptions:findings_low_mfu_threshold', 'assumptions:mfu_typical'] as assumption_ids
    from job_mfu j
    cross join thr
    cross join (select value as typ, low as typ_low, high as typ_high from param where assumption_id = 'mfu_typical') c
    where j.mfu < thr.low_mfu
),

unobserved_resources as (
    -- billed GPU capacity that no telemetry maps to, in a month that has telemetry (a month
    -- with none is not instrumented at all: Energy by source then shows every kWh as tdp_model)
    select u.month, 'unobserved_resource' as finding, u.resource_id as subject, u.resource_id, u.team,
        u.billed_h as value, 'h' as unit, null::double as low, null::double as high, u.cost_usd,
        null::double as energy_kwh,
        'billed GPU-hours with no telemetry, energy estimated from TDP: if its host is scraped, map it in [hosts] of meterbook.toml or label its series with the instance id' as detail,
        []::varchar[] as assumption_ids
    from bill_vs_telemetry u
    where u.hosts = 0 and u.billed_h > 0 and u.month in (select month from observed)
),

findings as (
    select month, 'low_utilization' as finding, coalesce(low_util.host, 'no host label') || '/' || low_util.gpu_uuid as subject, resource_id, low_util.team,
        low_util.hours as value, 'h' as unit, low_util.hours as low, low_util.hours as high,
        low_util.hours * r.usd_per_gpu_h * (1 - low_util.util) as cost_usd,
        printf('%.1f h at %.0f%% mean utilization (threshold %.0f%%): the unused %.0f%% of its %.0f USD is at stake',
               low_util.hours, 100 * low_util.util, 100 * thr.util, 100 * (1 - low_util.util), low_util.hours * r.usd_per_gpu_h) as detail,
        (select list(coefficient_id) from param where assumption_id in ('findings_low_util_threshold', 'findings_low_util_min_hours')) as assumption_ids
    from low_util cross join thr left join resource_rate r using (month, resource_id)
    where low_util.hours > thr.min_h
    union all
    select q.month, 'requested_idle', q.subject, q.resource_id, q.team, q.hours, 'h', null, null,
        q.hours * r.usd_per_gpu_h,
        printf('%.1f GPU-h held under a GPU request with the GPU below %.0f%% utilization: release the request or share the GPU',
               q.hours, 100 * thr.util),
        (select list(coefficient_id) from param where assumption_id = 'findings_low_util_threshold')
    from requested_idle q cross join thr left join resource_rate r using (month, resource_id)
    where q.hours > 0
    union all
    select l.month, 'idle_gpu_hours', coalesce(l.resource_id, 'no billed resource'), l.resource_id, null,
        sum(l.amount) filter (where l.meter = 'gpu_hours_observed')::double, 'h', null, null,
        -- an owned cluster's idle capacity saves nothing by scaling down: its capital is spent
        case when o.resource_id is null then sum(l.amount) filter (where l.meter = 'effective_cost')::double end,
        case when o.resource_id is not null
             then 'idle capacity of an owned cluster, its share of the cost pool shared by the idle rule: the capital is '
                  || 'spent, so nothing is saved by stopping it; fill it with work or size the next purchase to the use'
             else 'idle GPU time (no workload) on the resource and its effective cost, shared by the idle rule' end,
        []::varchar[]
    from allocation_lines l left join owned o on o.resource_id = l.resource_id
    where l.rule like 'idle:%' group by l.month, l.resource_id, o.resource_id
    union all
    -- these branches repeat a column on purpose: the names come from the first branch
    -- noqa: disable=AL08
    select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, detail, assumption_ids
    from int_purchase_options
    union all
    select u.month, 'gpu_hours_gap', u.resource_id, u.resource_id, null,
        u.billed_h - u.observed_h, 'h', null, null, null,
        printf('billed %.1f GPU-h, telemetry %.1f GPU-h', u.billed_h, u.observed_h),
        (select list(coefficient_id) from param where assumption_id = 'reconciliation_gap_tolerance_fraction')
    from bill_vs_telemetry u cross join thr
    where u.hosts > 0 and abs(u.billed_h - u.observed_h) > thr.tol * greatest(u.billed_h, u.observed_h)
    -- noqa: enable=AL08
    union all
    select strftime(o.end_utc, '%Y-%m'), 'energy_gap', coalesce(o.project, '') || '/' || coalesce(o.run_id, o.row_number::varchar),
        null, null, o.tel_kwh - o.run_kwh, 'kWh', null, null, null,
        printf('CodeCarbon %.3f kWh GPU energy (PUE removed), DCGM %.3f kWh on %d busy GPUs over the run', o.run_kwh, o.tel_kwh, o.gpus),
        (select list(coefficient_id) from param where assumption_id = 'reconciliation_gap_tolerance_fraction')
    from run_overlap o cross join thr
    where o.gpus = o.gpu_count and abs(o.tel_kwh - o.run_kwh) > thr.tol * greatest(o.tel_kwh, o.run_kwh)
    union all
    select month, 'scaling_efficiency', project, null, null,
        efficiency_at_used, 'fraction', null, null, cost_at_used_usd - cost_at_opt_usd,
        printf('%s at GPU counts %s: serial fraction %.3f, communication %.4f per GPU; E(%d) = %.2f; cost-optimal K* = %s (range %s-%s) vs %d used',
               project, gpu_counts, serial_fraction, comm_fraction, k_used, efficiency_at_used,
               coalesce(k_opt::varchar, 'n/a'), coalesce(k_opt_low::varchar, 'n/a'), coalesce(k_opt_high::varchar, 'n/a'), k_used),
        ['assumptions:wallclock_value_usd_per_h']
    from int_scaling_fits
    union all
    select month, 'invoice_difference', invoice_id, null, null,
        difference::double, currency, null, null, abs(difference)::double,
        case when status = 'no export lines'
             then printf('invoice %s of %s %s (%s %.2f) matches no export line of the month: ingest the export it covers, or check its id, billing account and period',
                         invoice_id, coalesce(issuer, 'an unnamed issuer'), coalesce(billing_account_id, ''), currency, invoice_amount::double)
             else printf('invoice %s: %s %.2f invoiced, %.2f in %d export lines, %.2f allocated to teams; the exports are missing or restating lines, or the invoice was typed wrong',
                         invoice_id, currency, invoice_amount::double, export_billed_cost::double, lines, allocated_billed_cost::double) end,
        []::varchar[]
    from reconciliation
    where basis = 'invoice' and status <> 'reconciled'
),

market_findings as (
    -- declared instruments (files), not meterbook.toml's supplier factors, which carry no volume
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
            when 'unmatched' then printf('%s (%s, %s): no consumption this month in zone %s; name a zone, grid zone, operator code or country that has GPU energy',
                                         instrument_id, instrument_type, source, declared_zone)
            else printf('%s is declared again (%s row %d): an instrument is claimed once', instrument_id, coalesce(origin_path, origin), row_number)
        end,
        []::varchar[]
    from market_basis_month
    where claim_kind in ('unmatched', 'duplicate') and origin = 'instruments file'
    union all
    select month, 'market_factor_missing', zone, null, null, uncovered_kwh, 'kWh', null, null, null, uncovered_kwh as energy_kwh,
        market_reason, []::varchar[]
    from carbon_month
    where market_status = 'not available'
)

select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, null::double as energy_kwh,
    detail, assumption_ids
from findings
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids
from unmatched_hosts
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids
from unobserved_resources
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids
from telemetry_findings
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids
from low_mfu_jobs
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids
from market_findings
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids from int_commitment_findings
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids
from int_provider_split_findings
