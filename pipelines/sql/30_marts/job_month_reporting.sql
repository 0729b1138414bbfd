-- Grain: month x job x team x billing currency, as job_month. Each job's money as billed
-- (job_month's columns, in `currency`) and, beside it, in the month's reporting currency
-- (*_reporting, reporting_currency): a job's cost is a share of its team's lines spread over
-- the month, so it converts at its billing currency's month rate for the bill
-- (int_fx_bill_rates, the converted bill over the bill: one rate per currency and month, the
-- same as a finding's). `meterbook export jobs` and the chargeback's job tables read it.
-- Reporting figures are null where a rate is missing.
select j.*,
    x.reporting_currency,
    j.billed_cost * x.rate::double as billed_cost_reporting,
    j.effective_cost * x.rate::double as effective_cost_reporting,
    j.effective_cost_idle * x.rate::double as effective_cost_idle_reporting,
    j.effective_cost_other * x.rate::double as effective_cost_other_reporting,
    j.cost_per_mtok * x.rate::double as cost_per_mtok_reporting,
    j.cost_per_k_requests * x.rate::double as cost_per_k_requests_reporting,
    j.cost_per_k_samples * x.rate::double as cost_per_k_samples_reporting
from job_month j
left join int_fx_bill_rates x on x.month = j.month and x.currency = j.currency
