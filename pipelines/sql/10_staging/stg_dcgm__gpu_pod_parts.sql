-- Valid DCGM samples of one file -> observed scrapes per GPU-hour and workload labels.
-- A scrape with empty pod labels is time with no workload mapped to the GPU.
with samples as (
    select s.* from _staged s
    anti join (select distinct row_number from _rejects) r using (row_number)
)

select
    gpu_uuid,
    date_trunc('hour', ts) as hour_start,
    namespace,
    pod,
    container,
    count(distinct ts) as n_scrapes
from samples
group by all
