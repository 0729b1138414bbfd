-- Grain: month x finding x subject. What deserves a look, with the money or GPU-hours at stake.
-- value/low/high are in `unit`; cost_usd is the spend concerned (or saving, see finding) in the
-- billing currency; energy_kwh the measured energy concerned (telemetry findings);
-- assumption_ids name the coefficient rows used (sources/reference).
-- One intermediate model per family of findings, each with its findings described:
--   int_findings_utilization     low_utilization, requested_idle, idle_gpu_hours
--   int_purchase_options         commitment_candidate, spot_candidate, owned_break_even: buying
--                                alternatives for a material on-demand resource, cost_usd = what
--                                each saves
--   int_findings_bill            gpu_hours_gap, unmatched_host, unobserved_resource, invoice_difference
--   int_findings_telemetry       energy_gap, energy_above_board, telemetry_gap, telemetry_interval
--   int_findings_jobs            low_mfu, scaling_efficiency
--   int_findings_market          instrument_overclaimed, instrument_unmatched, instrument_duplicate,
--                                market_factor_missing, supplier_factor_unmatched
--   int_commitment_findings      commitment_unused
--   int_provider_split_findings  provider_split_differs: AWS's split of a node's pods vs telemetry's
-- payers: for a finding on part of a resource (a GPU, a pod, one team's share of a node), the teams
-- charged for that part, each with a weight (GPU-hours): its model knows the rows it counts. Null
-- for a finding on a whole resource or on none. findings_ranked makes paying_teams of it.
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids, payers
from int_findings_utilization
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, null::double as energy_kwh,
    detail, assumption_ids, null
from int_purchase_options
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids, null
from int_findings_bill
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids, payers
from int_findings_telemetry
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids, null
from int_findings_jobs
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids, null
from int_findings_market
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids, null
from int_commitment_findings
union all
select month, finding, subject, resource_id, team, value, unit, low, high, cost_usd, energy_kwh, detail, assumption_ids, payers
from int_provider_split_findings
