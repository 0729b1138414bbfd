-- Grain: charge line (int_charges_teams: file, row, charge_line). The billing rows a charge
-- line's details are, with the day of the charge, the file's rank (int_file_ranks) and the
-- row's own amount of each meter. Ephemeral: inlined into its readers.
select c.source_group, c.month, c.resource_id, c.charge_period_start::date as day, f.file_rank,
    c.row_number as source_row, c.charge_line, c.billed_cost::double as billed_cost,
    c.effective_cost::double as effective_cost, c.list_cost::double as list_cost,
    coalesce(c.gpu_hours, 0) as gpu_hours
from int_charges_teams c
join int_file_ranks f using (file_id)
