-- Grain: charges line (int_charges_teams: file, row, charge_line). Each line with what
-- focus_export reports beside the charge: its file's sha256, the FOCUS input's own columns
-- (charge_source_columns, on line 0 of a row), every team's share of its billed cost
-- (allocation_lines), its part of the resource's month of energy and carbon (int_energy_lines,
-- shared over the resource's GPU-capacity lines by GPU-hours; other lines none) and the
-- exchange rate to the reporting currency (int_fx_applied). Ephemeral: inlined into its readers.
with resource_energy as (
    select resource_id, month,
        sum(it_energy_kwh) as it_kwh, sum(facility_energy_kwh) as kwh,
        sum(facility_energy_kwh_low) as kwh_low, sum(facility_energy_kwh_high) as kwh_high,
        sum(co2e_kg) as co2e, sum(co2e_kg_low) as co2e_low, sum(co2e_kg_high) as co2e_high
    from int_energy_lines where resource_id is not null
    group by all
),

resource_hours as (
    select resource_id, month, sum(gpu_hours) as gpu_hours
    from int_charges_teams where gpu_hours > 0 group by all
),

allocations as (
    select source_group,
        list({'team': team, 'rule': rule, 'share': share} order by share desc, team asc, rule asc) as parts
    from allocation_lines
    where meter = 'billed_cost'
    group by all
)

select c.*, f.sha256, w.columns as src, a.parts,
    c.gpu_hours / nullif(h.gpu_hours, 0) as energy_share,
    e.kwh, e.kwh_low, e.kwh_high, e.co2e, e.co2e_low, e.co2e_high,
    x.reporting_currency, x.rate as fx_rate
from int_charges_teams c
join source_files f using (file_id)
left join resource_hours h on h.resource_id = c.resource_id and h.month = c.month and c.gpu_hours > 0
left join resource_energy e on e.resource_id = c.resource_id and e.month = c.month and c.gpu_hours > 0
left join charge_source_columns w on w.file_id = c.file_id and w.row_number = c.row_number and c.charge_line = 0
left join allocations a on a.source_group = c.source_group
left join int_fx_applied x on x.month = c.month and x.from_currency = c.billing_currency
    and x.day is not distinct from c.charge_period_start::date
