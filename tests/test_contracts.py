"""The same pandera model, run by pandera on a frame and as compiled SQL over DuckDB, must
reject the same rows for the same reasons."""
from __future__ import annotations

import duckdb
import pandas as pd
import pandera.errors
import pytest

from schemas.charges import Charges
from schemas.contract import reject_sql, sql_checks


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "row_number": [1, 2, 3, 4, 5],
        "charge_period_start": pd.to_datetime(["2026-10-01", "2026-10-01", None, "2026-10-02", "2026-10-03"]),
        "charge_period_end": pd.to_datetime(["2026-10-02"] * 5),
        "charge_category": ["Usage", "Usgae", "Tax", "Credit", "Usage"],
        "billed_cost": [1.0, 2.0, 3.0, -4.0, None],
        "effective_cost": [1.0, 2.0, 3.0, -4.0, 5.0],
        "list_cost": [1.0, 2.0, 3.0, 0.0, 5.0],
        "billing_currency": ["USD", "USD", "usd", "EUR", "USD"],
        "consumed_quantity": [1.0, None, None, None, 1.0],
        "gpu_count": [8.0, None, None, None, 0.0],
        "gpu_hours": [8.0, None, None, None, 0.0],
    })


def test_sql_and_pandera_reject_the_same_rows():
    df = frame()
    with pytest.raises(pandera.errors.SchemaErrors) as exc:
        Charges.validate(df, lazy=True)
    cases = exc.value.failure_cases
    pandera_rows = set(df.loc[cases["index"].dropna().astype(int), "row_number"])
    con = duckdb.connect()
    con.register("df", df)
    con.execute("create temp table _staged as select * from df")
    con.execute("create temp table _rejects (row_number bigint, column_name varchar, check_name varchar, value varchar, message varchar)")
    con.execute(reject_sql(Charges, set(df.columns)))
    sql_rows = {r[0] for r in con.execute("select distinct row_number from _rejects").fetchall()}
    assert sql_rows == pandera_rows == {2, 3, 5}
    checks = {(r[0], r[1]) for r in con.execute("select row_number, column_name from _rejects").fetchall()}
    assert {(2, "charge_category"), (3, "charge_period_start"), (3, "billing_currency"), (5, "billed_cost"),
            (5, "gpu_count")} <= checks


def test_every_check_of_every_model_compiles():
    from schemas.int_gpu_hours import GpuHours
    for model in (Charges, GpuHours):
        assert sql_checks(model), model.__name__
