"""Contract of `team_namespace_day` (grain: month x day x team x namespace): observed GPU time per
namespace and day, where telemetry exists."""
from __future__ import annotations

import pandera.pandas as pa

from schemas.allocation_lines import MONTH


class TeamNamespaceDay(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    day: pa.DateTime = pa.Field(description="UTC date")
    team: str
    namespace: str = pa.Field(nullable=True)
    gpu_hours: float = pa.Field(ge=0, description="observed GPU-hours")
    it_energy_kwh: float = pa.Field(nullable=True, ge=0)
    util_mean: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1})

    class Config:
        coerce = True
        strict = False
        unique = ["month", "day", "team", "namespace"]
