-- Grain: host x namespace x UTC hour (workload time only). The GPU board energy telemetry gave a
-- workload in each hour, so the footprint audit can check a CodeCarbon run's own measurement
-- against DCGM over the run's window (host_workload_month holds the month's totals).
select
    strftime(hour_start, '%Y-%m') as month,
    host,
    namespace,
    hour_start,
    dsum(energy_kwh) as it_energy_kwh
from int_gpu_workloads
where not is_idle and not is_capacity
group by all
