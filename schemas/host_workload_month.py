"""Contract of `host_workload_month` (grain: month x host x namespace): the GPU workloads telemetry
saw on each host, with their window, GPU model and measured energy, for the footprint audit's
matching of disclosures and CodeCarbon runs to the hosts they ran on."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class HostWorkloadMonth(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    host: str = pa.Field(description="DCGM host label")
    resource_id: str = pa.Field(nullable=True, description="billed resource the host resolves to, if any")
    team: str = pa.Field(description="the namespace's team, else the unallocated name")
    namespace: str = pa.Field(description="Kubernetes namespace of the workload")
    gpu_model: str = pa.Field(nullable=True, description="gpu_specs model; null when unresolved")
    gpus: int = pa.Field(ge=1, description="distinct GPUs the workload held")
    first_hour: pa.DateTime = pa.Field(description="first UTC hour with the workload")
    end_hour: pa.DateTime = pa.Field(description="end of the last UTC hour with the workload")
    gpu_hours: float = pa.Field(ge=0, description="observed GPU-hours")
    it_energy_kwh: float = pa.Field(nullable=True, ge=0, description="GPU board energy in those hours")
    zone: str = pa.Field(nullable=True, description="grid zone of the host ('aws:us-east-1')")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "host", "namespace"]
