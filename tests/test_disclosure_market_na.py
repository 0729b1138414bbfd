"""A job whose market-based CO2e is not available (a zone with no instrument, supplier factor or
residual mix) is filed as not available, never as 0 t, and one such month or job makes the sum
over a period or a model not available rather than a partial, understated figure."""
from __future__ import annotations

from reports.disclosure import SCOPE_COLUMNS, SUMMED, ai_act, markdown, sci, subject
from tests.disclosure_tables import job_disclosure_table


def _row(**over) -> dict:
    row = {c: 1.0 for c in SUMMED} | {c: "cloud" for c in SCOPE_COLUMNS}
    row |= {"jobs": "j", "first_month": "2026-10", "last_month": "2026-10", "workload": "training", "params": 1e9,
            "gpu_models": "H100-SXM5-80GB", "gpus": 8, "start_utc": "2026-10-14 00:00:00", "end_utc": "2026-10-15 00:00:00",
            "energy_tier": "measured", "assumption_ids": [], "rows": 1, "wall_clock_h": 24.0, "work_flops": 3.3e20,
            "tokens": 5e10, "requests": None}
    return row | over


def test_an_unavailable_market_figure_is_not_filed_as_zero():
    form = ai_act(_row(co2e_market_kg=None))
    assert form["co2e_market_t"] is None
    md = markdown("j", form, sci(_row(co2e_market_kg=None)))
    assert "0.0000 t market-based" not in md and "market-based not available" in md
    assert ai_act(_row(co2e_market_kg=250.0))["co2e_market_t"] == 0.25


def test_a_month_without_a_market_figure_makes_the_period_sum_not_available():
    con = job_disclosure_table()
    for month, market in (("2026-09", 80.0), ("2026-10", None)):
        con.execute("""insert into job_disclosure_month (month, job_id, workload, energy_tier, assumption_ids,
            ownership, electricity_scope, embodied_scope, co2e_kg, co2e_market_kg)
            values (?, 'j', 'training', 'measured', [], 'cloud', 'Scope 3, category 1', 'Scope 3, category 1', 100, ?)""",
                    [month, market])
    assert subject(con, ("2026-09", "2026-10"), "j", None)["co2e_market_kg"] is None
    assert subject(con, ("2026-09", "2026-09"), "j", None)["co2e_market_kg"] == 80.0
