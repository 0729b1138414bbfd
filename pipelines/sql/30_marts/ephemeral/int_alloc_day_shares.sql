-- Grain: source group x team_key x detail (int_alloc_day_details). The share of the group's
-- weight up to and before each detail, per weight (upto1/before1..upto4/before4; no weight at
-- all: even parts), and whether the detail is the group's last. Computed once per source group
-- (not per line: a group has up to 18 meters and several teams) over narrow rows; each line then
-- takes its part by arithmetic alone (allocation_day). Ephemeral: inlined into its readers.
with running as (
    select *,
        -- decimal sums (dsum, written out): a double running sum depends on the order the engine
        -- adds in, and a floor below flips a cent between two details when it does
        sum(coalesce(w1, 0)::decimal(38, 12)) over upto_here as cum1,
        sum(coalesce(w2, 0)::decimal(38, 12)) over upto_here as cum2,
        sum(coalesce(w3, 0)::decimal(38, 12)) over upto_here as cum3,
        sum(coalesce(w4, 0)::decimal(38, 12)) over upto_here as cum4,
        sum(coalesce(w1, 0)::decimal(38, 12)) over whole as total1,
        sum(coalesce(w2, 0)::decimal(38, 12)) over whole as total2,
        sum(coalesce(w3, 0)::decimal(38, 12)) over whole as total3,
        sum(coalesce(w4, 0)::decimal(38, 12)) over whole as total4,
        row_number() over upto_here as k,
        count(*) over whole as n
    from int_alloc_day_details
    window
        upto_here as (partition by source_group, team_key
                      order by day, file_rank, source_row, charge_line, namespace, workload, sharing_mode, split_rule
                      rows between unbounded preceding and current row),
        whole as (partition by source_group, team_key
                  order by day, file_rank, source_row, charge_line, namespace, workload, sharing_mode, split_rule
                  rows between unbounded preceding and unbounded following)
)

select source_group, team_key, day, file_rank, source_row, charge_line, namespace, workload, sharing_mode, split_rule,
    k = n as is_last,
    coalesce(cum1 / nullif(total1, 0), k / n) as upto1,
    coalesce((cum1 - coalesce(w1, 0)::decimal(38, 12)) / nullif(total1, 0), (k - 1) / n) as before1,
    coalesce(cum2 / nullif(total2, 0), k / n) as upto2,
    coalesce((cum2 - coalesce(w2, 0)::decimal(38, 12)) / nullif(total2, 0), (k - 1) / n) as before2,
    coalesce(cum3 / nullif(total3, 0), k / n) as upto3,
    coalesce((cum3 - coalesce(w3, 0)::decimal(38, 12)) / nullif(total3, 0), (k - 1) / n) as before3,
    coalesce(cum4 / nullif(total4, 0), k / n) as upto4,
    coalesce((cum4 - coalesce(w4, 0)::decimal(38, 12)) / nullif(total4, 0), (k - 1) / n) as before4
from running
