"""Findings that add up: "at stake" is what the action saves, actions on one resource are counted
once (the largest), page 1 states the total, and owned GPUs are priced by their own model."""
from __future__ import annotations

import duckdb
import pytest

from reports.render import money
from sources.reference_data import assumption
from tests.pdf_helpers import text

MONTH = "2026-10"
OPTIONS = ("commitment_candidate", "spot_candidate", "owned_break_even")


def _rows(wh, sql: str) -> list[dict]:
    with duckdb.connect(str(wh), read_only=True) as con:
        rel = con.execute(sql, [MONTH])
        cols = [d[0] for d in rel.description]
        return [dict(zip(cols, r)) for r in rel.fetchall()]


@pytest.fixture(scope="module")
def ranked(chargeback_demo) -> list[dict]:
    return _rows(chargeback_demo["wh"], "select * from findings_ranked where month = ? order by rank")


def test_actions_on_one_resource_are_counted_once_the_largest(ranked):
    on_resource = [f for f in ranked if f["section"] == "decision" and f["resource_id"] and f["finding"] != "invoice_difference"]
    by_resource: dict[str, list[dict]] = {}
    for f in on_resource:
        by_resource.setdefault(f["resource_id"], []).append(f)
    shared = [fs for fs in by_resource.values() if len(fs) > 1]
    assert shared      # the demo has Spot, commitment and owned GPUs on one resource, idle and low utilization on another
    for fs in shared:
        counted = [f for f in fs if f["saving_usd"] > 0]
        assert len(counted) == 1
        assert counted[0]["cost_usd"] == max(f["cost_usd"] for f in fs)
        assert all(f["overlapped_by"] == f"{counted[0]['finding']} {counted[0]['subject']}" for f in fs if f is not counted[0])


def test_page_one_states_the_total_of_savings_counted_once(ranked, chargeback_demo):
    total = sum(f["saving_usd"] for f in ranked)
    listed = sum(f["cost_usd"] or 0 for f in ranked if f["section"] == "decision" and f["finding"] != "invoice_difference")
    assert total < listed           # overlapping actions are not summed
    body = " ".join(text(chargeback_demo["out"] / "chargeback.pdf").split())    # notes wrap in their cells
    assert f"Savings if every action is taken: USD {money(total, 0)}" in body
    assert "not added: within" in body


def test_owned_gpus_are_priced_by_their_model_and_at_stake_is_the_difference_over_their_life(ranked, chargeback_demo):
    owned = [f for f in ranked if f["finding"] == "owned_break_even"]
    assert owned
    life_months = assumption("hardware_lifetime_years")["value"] * 12
    opex = assumption("owned_opex_usd_per_gpu_month")["value"]
    for f in owned:
        (row,) = _rows(chargeback_demo["wh"], f"""select i.gpu_model, i.gpu_count, c.value as capex, c.coefficient_id
            from (select distinct instance_type from team_resource_month where month = ? and resource_id = '{f["resource_id"]}') r
            join ref_instance_types i using (instance_type) join ref_capital_costs c using (gpu_model)""")
        assert row["coefficient_id"] in f["assumption_ids"]
        assert f"x {row['gpu_model']}" in f["detail"]
        assert row["gpu_model"] != "A10G" or row["capex"] < assumption("owned_capex_usd_per_gpu")["value"]   # no HGX price for an A10G
        spend = row["gpu_count"] * row["capex"] / f["value"] + row["gpu_count"] * opex   # the month's spend, from the payback
        saving = (life_months * (spend - row["gpu_count"] * opex) - row["gpu_count"] * row["capex"]) / life_months
        assert f["cost_usd"] == pytest.approx(max(saving, 0), rel=1e-9)
        assert f["cost_usd"] < spend        # what owning saves, not the whole spend


def test_spot_and_commitment_at_stake_are_their_discounts(ranked):
    for f in ranked:
        if f["finding"] in ("spot_candidate", "commitment_candidate"):
            assert "saves" in f["detail"] or "minus the Spot price" in f["detail"]
            assert 0 < f["cost_usd"]
