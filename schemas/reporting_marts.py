"""Contracts of the marts that put a billing-currency mart's money beside the same in the month's
reporting currency: each is its source mart's contract (same grain, same checks) plus the
reporting currency and the converted figures, null only where a rate is missing."""
from __future__ import annotations

import pandera.pandas as pa

from core.sql import literal
from schemas.allocation_day import AllocationDay
from schemas.allocation_lines import ISO_4217
from schemas.contract import passing_rows
from schemas.job_month import JobMonth
from schemas.whatif_month import WhatifMonth

MONEY_METERS = ("billed_cost", "effective_cost", "list_cost")


class AllocationDayReporting(AllocationDay):
    reporting_currency: str = pa.Field(nullable=True, str_matches=ISO_4217)
    amount_reporting: float = pa.Field(nullable=True, description="a money row's amount in the reporting currency")

    # energy, GPU-hours and CO2e have no currency: their reporting amount stays empty; a converted
    # amount names its currency
    @pa.dataframe_check(columns=["meter", "amount_reporting", "reporting_currency"],
                        passes=f"amount_reporting is null or (meter in ({', '.join(literal(m) for m in MONEY_METERS)}) "
                               "and reporting_currency is not null)")
    def only_money_converts(cls, df, *, columns, passes):
        return passing_rows(df, passes)


class JobMonthReporting(JobMonth):
    reporting_currency: str = pa.Field(nullable=True, str_matches=ISO_4217)
    billed_cost_reporting: float = pa.Field(nullable=True)
    effective_cost_reporting: float = pa.Field(nullable=True)


class WhatifMonthReporting(WhatifMonth):
    currency: str = pa.Field(nullable=True, str_matches=ISO_4217, description="billing currency of the subject's spend")
    reporting_currency: str = pa.Field(nullable=True, str_matches=ISO_4217)
    cost_delta_reporting: float = pa.Field(nullable=True)

    # a rate is positive: a saving stays a saving in the reporting currency
    @pa.dataframe_check(columns=["cost_usd_delta", "cost_delta_reporting"],
                        passes="cost_usd_delta is null or cost_delta_reporting is null or cost_usd_delta * cost_delta_reporting >= 0")
    def converted_delta_keeps_its_sign(cls, df, *, columns, passes):
        return passing_rows(df, passes)
