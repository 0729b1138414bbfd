-- Grain: month x lever x scenario x subject [x zone], as whatif_month. Its cost figures (in the
-- billing currency of the subject's spend: a resource's own, else its team's only one, else the
-- reporting currency) beside the same in the month's reporting currency (*_reporting), at the
-- bill's rate of that currency and month (int_fx_bill_rates), as a finding's money at stake.
-- `meterbook whatif` and the audit's what-if section read it.
with tagged as (
    select w.*, coalesce(r.currency, t.currency, m.currency) as currency, m.reporting_currency
    from whatif_month w
    left join int_fx_owners r on r.month = w.month and r.owner_kind = 'resource' and r.owner = w.subject
    left join int_fx_owners t on t.month = w.month and t.owner_kind = 'team' and t.owner = w.team
    left join int_fx_owners m on m.month = w.month and m.owner_kind = 'month' and m.owner = w.month
)

select g.*,
    g.baseline_cost_usd * x.rate::double as baseline_cost_reporting,
    g.cost_usd_delta * x.rate::double as cost_delta_reporting,
    g.cost_usd_delta_low * x.rate::double as cost_delta_low_reporting,
    g.cost_usd_delta_high * x.rate::double as cost_delta_high_reporting
from tagged g
left join int_fx_bill_rates x on x.month = g.month and x.currency = g.currency
