"""Contract of `allocation_day` (grain: allocation line x day x resource x namespace x workload x
source file and row). The drill-down under team_month: each allocation line's amount split over
the billing rows or GPU-hours it rests on, in whole quanta, so the details of a line add up to it
exactly and carry its sign where its source rows share one."""
from __future__ import annotations

import pandera.pandas as pa

from core.sql import literal
from core.vocabulary import METERS, SHARING_MODES
from schemas.allocation_lines import ISO_4217, MONTH, RULE
from schemas.contract import passing_rows

SHA256 = r"^[0-9a-f]{64}$"


class AllocationDay(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    day: pa.DateTime = pa.Field(nullable=True, description="UTC day of the charge or GPU-hour; null: no detail")
    team: str = pa.Field(description="receiving team, the unallocated team included")
    resource_id: str = pa.Field(nullable=True, description="billed resource; null for shared services")
    namespace: str = pa.Field(nullable=True, description="Kubernetes namespace from telemetry; null: none seen")
    workload: str = pa.Field(nullable=True, description="pod from telemetry; null: none seen")
    rule: str = pa.Field(str_matches=RULE)
    sharing_mode: str = pa.Field(nullable=True, isin=list(SHARING_MODES),
                                 description="how the GPU behind a telemetry detail was shared; null on billing rows")
    split_rule: str = pa.Field(nullable=True, description="the rule that split that GPU-hour (docs/sharing.md)")
    meter: str = pa.Field(isin=list(METERS))
    amount: float = pa.Field(ne=0, description="in `unit`; exact DECIMAL in the table; zero details are left out")
    unit: str = pa.Field(description="billing currency (ISO 4217) for money, else the meter's unit")
    source_sha256: str = pa.Field(nullable=True, str_matches=SHA256, description="sha256 of the input file")
    source_row: float = pa.Field(nullable=True, ge=1, description="1-based data row; null for telemetry hours and estimated energy (by day and file)")
    source_line: int = pa.Field(ge=0, description="0 the row itself; 1.. credits split out of it (GCP)")
    source_group: str

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team", "meter", "rule", "source_group", "day", "source_sha256", "source_row",
                  "source_line", "namespace", "workload", "sharing_mode", "split_rule"]

    # money in a currency, every other meter in its own unit: a BI tool grouping by unit must never
    # add GPU-hours to dollars
    @pa.dataframe_check(columns=["meter", "unit"], passes="case meter " + " ".join(
        f"when {literal(m)} then " + (f"regexp_full_match(unit, {literal(ISO_4217)})" if u == "currency"
                                      else f"unit = {literal(u)}") for m, (u, _) in METERS.items()) + " end")
    def unit_is_the_meters_unit(cls, df, *, columns, passes):
        return passing_rows(df, passes)
