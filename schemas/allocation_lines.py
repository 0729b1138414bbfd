"""Contract of `allocation_lines` (grain: month x team x meter x rule x source group). Every
source group's amount of a meter is split over its teams in whole quanta, so its lines add up to
the source amount and keep its sign; money and GPU-hours are negative on credits and corrections."""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from core.sql import literal
from core.vocabulary import CATEGORIES, METERS, RULES
from schemas.contract import passing_rows

MONTH = r"^\d{4}-(0[1-9]|1[0-2])$"
ISO_4217 = r"^[A-Z]{3}$"
# Billed meters come from the bill and carry its currency; the others from telemetry, none.
CHARGE_METERS = ["billed_cost", "effective_cost", "list_cost", "gpu_hours"]
UNITS = sorted({unit for unit, _ in METERS.values()})
# Rules of int_alloc_targets: the first-stage ones (int_alloc_first_stage; provider_split and
# unallocated_capacity from int_provider_split), then <category>:<configured rule>, plus what
# the SQL adds itself (idle:owner, credits:follows, <category>:no_basis).
# An owned cluster's unallocated capacity (category unallocated_capacity) follows the idle rule
# under its own name, owned_capacity:<rule>.
RULE = (rf"^(direct|telemetry_split|unobserved|provider_split|unallocated_capacity"
        rf"|({'|'.join(CATEGORIES)}):({'|'.join([*RULES, 'owner', 'follows', 'no_basis'])})"
        rf"|owned_capacity:({'|'.join([*RULES, 'no_basis'])}))$")
GROUP_CATEGORIES = ["direct", *CATEGORIES, "unallocated_capacity"]


class AllocationLines(pa.DataFrameModel):
    month: str = pa.Field(str_matches=MONTH, description="YYYY-MM")
    team: str = pa.Field(description="receiving team, the unallocated team included")
    meter: str = pa.Field(isin=list(METERS))
    unit: str = pa.Field(isin=UNITS, description="'currency' = the line's billing currency")
    currency: str = pa.Field(nullable=True, str_matches=ISO_4217, description="null on telemetry meters")
    rule: str = pa.Field(str_matches=RULE)
    category: str = pa.Field(isin=GROUP_CATEGORIES, description="the source group's category")
    source_group: str
    amount: float = pa.Field(description="the team's part, in `unit`; exact DECIMAL in the table")
    source_amount: float = pa.Field(description="the whole source group's amount of the meter")
    share: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="normalised weight")

    class Config:
        coerce = True
        strict = False
        unique = ["month", "team", "meter", "rule", "source_group"]

    @pa.dataframe_check(columns=["meter", "currency"],
                        passes=f"(meter in ({', '.join(literal(m) for m in CHARGE_METERS)})) = (currency is not null)")
    def currency_only_on_charge_meters(cls, df: pd.DataFrame, *, columns: list[str], passes: str) -> pd.Series:
        """team_month and team_energy_lines tell money from energy by `currency is null`: a
        charge meter without a currency, or a telemetry meter with one, lands in the wrong table."""
        return passing_rows(df, passes)

    @pa.dataframe_check(columns=["amount", "source_amount"], passes="sign(amount) * sign(source_amount) >= 0")
    def sign_of_the_source(cls, df: pd.DataFrame, *, columns: list[str], passes: str) -> pd.Series:
        """Whole quanta of |amount| are split, then given the source's sign: a line of the
        opposite sign would move money the other way."""
        return passing_rows(df, passes)

    @pa.dataframe_check(columns=["month", "source_group", "meter", "amount", "source_amount"],
                        passes="abs(sum(amount) over (partition by month, source_group, meter) - source_amount)"
                               " <= 1e-9 * (1 + abs(source_amount))")
    def lines_add_up_to_the_source(cls, df: pd.DataFrame, *, columns: list[str], passes: str) -> pd.Series:
        """Exact in DECIMAL; compared here as doubles, so within 1e-9 relative: far below the
        smallest quantum of a real amount, far above the rounding of summing doubles."""
        return passing_rows(df, passes)
