"""findings_month on hand-written months, and the scaling fit behind the GPU-count finding."""
from __future__ import annotations

from datetime import timedelta

import pytest

from pipelines.config import Config
from pipelines.scaling import amdahl_comm_time, cost_optimal_k, efficiency, fit_scaling
from tests.allocation_fixtures import M0, Charge, GpuHour, build, run_after_gpu_hours

HOSTS = {"ip-1": "i-node"}
NS = {"llm": "research", "embed": "search"}


def findings(con, kind: str) -> list[tuple]:
    return con.execute("select subject, value, unit, cost_usd, detail from findings_month where finding = ? order by subject",
                       [kind]).fetchall()


def busy(gpu: str, hours: int, util: float, ns: str = "llm", start: int = 0) -> list[GpuHour]:
    return [GpuHour("ip-1", gpu, start + h, 0.3, util, {ns: 120}) for h in range(hours)]


def test_underused_gpu_over_an_hour_is_reported_and_threshold_is_configurable(tmp_path):
    hours = busy("GPU-low", 3, 0.2) + busy("GPU-brief", 1, 0.2) + busy("GPU-ok", 3, 0.9)
    con = build(tmp_path, [Charge("70.00", {"team": "platform"}, "i-node", gpu_hours=7.0)], hours,
                Config(namespace_teams=NS, hosts=HOSTS))
    got = findings(con, "low_utilization")
    assert [(s, v) for s, v, *_ in got] == [("ip-1/GPU-low", 3.0)]       # 1 h is not "more than an hour"
    # at stake: the unused share of 3 GPU-h at 10 USD each, at 20 % utilization, not their whole cost
    assert got[0][3] == pytest.approx(30.0 * (1 - 0.2))
    run_after_gpu_hours(con, Config(namespace_teams=NS, hosts=HOSTS, findings={"low_util_threshold": 0.95}))
    assert {s for s, *_ in findings(con, "low_utilization")} == {"ip-1/GPU-low", "ip-1/GPU-ok"}


def test_idle_gpu_hours_and_their_cost(tmp_path):
    hours = busy("GPU-a", 2, 0.9) + [GpuHour("ip-1", "GPU-a", 2 + h, 0.05, 0.0, {None: 120}) for h in range(2)]
    con = build(tmp_path, [Charge("40.00", {"team": "platform"}, "i-node", gpu_hours=4.0)], hours,
                Config(namespace_teams=NS, hosts=HOSTS))
    (subject, value, unit, cost, _), = findings(con, "idle_gpu_hours")
    assert (subject, value, unit, cost) == ("i-node", 2.0, "h", 20.0)


def test_steady_on_demand_capacity_is_a_commitment_candidate_and_part_time_is_not(tmp_path):
    month_h = 31 * 24
    con = build(tmp_path, [Charge("744.00", {"team": "a"}, "i-steady", gpu_hours=float(month_h)),
                           Charge("100.00", {"team": "b"}, "i-brief", gpu_hours=100.0)], [], Config())
    assert [s for s, *_ in findings(con, "commitment_candidate")] == ["i-steady"]
    discount = con.execute("select value from ref_assumptions where assumption_id = 'savings_plan_discount_gpu'").fetchone()[0]
    assert findings(con, "commitment_candidate")[0][3] == pytest.approx(744 * discount)
    spot = dict((s, v) for s, v, *_ in findings(con, "spot_candidate"))
    d, h = con.execute("""select max(value) filter (where assumption_id = 'spot_discount_gpu'),
        max(value) filter (where assumption_id = 'spot_lost_hours_per_preemption') from ref_assumptions""").fetchone()
    assert spot["i-steady"] == pytest.approx(d / ((1 - d) * h))
    owned = dict((s, v) for s, v, *_ in findings(con, "owned_break_even"))
    assert owned["i-brief"] is None or owned["i-brief"] > owned["i-steady"]


def test_billed_gpu_hours_without_telemetry_are_a_reconciliation_gap(tmp_path):
    con = build(tmp_path, [Charge("100.00", {"team": "a"}, "i-node", gpu_hours=10.0)], busy("GPU-a", 8, 0.9),
                Config(namespace_teams=NS, hosts=HOSTS))
    assert [(s, v) for s, v, *_ in findings(con, "gpu_hours_gap")] == [("i-node", 2.0)]
    # and the unobserved hours stay with the resource's own team
    assert con.execute("select team, sum(amount) from allocation_lines where rule = 'unobserved' and meter = 'billed_cost' group by 1").fetchall() \
        == [("a", 20)]


def test_billed_gpu_resource_without_telemetry_is_reported_not_a_gap(tmp_path):
    con = build(tmp_path, [Charge("100.00", {"team": "a"}, "i-node", gpu_hours=8.0),
                           Charge("50.00", {"team": "b"}, "i-dark", gpu_hours=5.0)], busy("GPU-a", 8, 0.9),
                Config(namespace_teams=NS, hosts=HOSTS))
    (subject, value, unit, cost, detail), = findings(con, "unobserved_resource")
    assert (subject, value, unit, cost) == ("i-dark", 5.0, "h", 50.0) and "[hosts]" in detail
    assert findings(con, "gpu_hours_gap") == []      # i-node is fully observed; i-dark is reported once


def spot_subjects(con) -> list[str]:
    return [s for s, *_ in findings(con, "spot_candidate")]


def cut(share: float, usd: float) -> Config:
    """[findings] materiality overrides: share of the month's GPU spend, and a floor in USD."""
    return Config(findings={"material_share_of_gpu_cost": share, "material_min_cost_usd": usd})


def test_savings_findings_only_for_material_resources(tmp_path):
    # GPU spend 10,000 + 300 + 60 USD: i-small is 2.9 % of it, i-tiny 0.6 % and under 100 USD
    charges = [Charge("10000.00", {"team": "a"}, "i-big", gpu_hours=100.0),
               Charge("300.00", {"team": "b"}, "i-small", gpu_hours=100.0),
               Charge("60.00", {"team": "c"}, "i-tiny", gpu_hours=10.0)]
    con = build(tmp_path, charges, [], cut(0.05, 100))
    assert spot_subjects(con) == ["i-big"]
    assert [s for s, *_ in findings(con, "owned_break_even")] == ["i-big"]
    run_after_gpu_hours(con, cut(0.02, 100))          # i-small's 2.9 % is now above the share
    assert spot_subjects(con) == ["i-big", "i-small"]
    run_after_gpu_hours(con, cut(0.0, 61))            # i-tiny's 60 USD stays under the floor
    assert spot_subjects(con) == ["i-big", "i-small"]
    run_after_gpu_hours(con, cut(0.0, 0))
    assert spot_subjects(con) == ["i-big", "i-small", "i-tiny"]


def test_materiality_defaults_come_from_the_reference_data(tmp_path):
    con = build(tmp_path, [Charge("10000.00", {"team": "a"}, "i-big", gpu_hours=100.0)], [], Config())
    share, usd = con.execute("""select max(value) filter (where assumption_id = 'findings_material_share_of_gpu_cost'),
        max(value) filter (where assumption_id = 'findings_material_min_cost_usd') from ref_assumptions""").fetchone()
    assert 0 < share < 1 and 0 <= usd < 10000
    (ids,), = con.execute("select assumption_ids from findings_month where finding = 'spot_candidate'").fetchall()
    assert {"assumptions:findings_material_share_of_gpu_cost", "assumptions:findings_material_min_cost_usd"} <= set(ids)


def test_fit_recovers_planted_amdahl_plus_communication():
    ks = [1, 2, 4, 8, 16]
    t = [float(amdahl_comm_time(k, 10.0, 0.07, 0.004)) for k in ks]
    t1, s, c = fit_scaling(ks, t)
    assert (t1, s, c) == pytest.approx((10.0, 0.07, 0.004), rel=1e-4)
    assert efficiency(1, s, c) == pytest.approx(1.0)
    assert efficiency(8, s, c) < efficiency(4, s, c)
    k_cheap, _ = cost_optimal_k(t1, s, c, price_per_gpu_h=4.0, value_per_h=0.0, k_max=32)
    k_busy, _ = cost_optimal_k(t1, s, c, price_per_gpu_h=4.0, value_per_h=1000.0, k_max=32)
    assert k_cheap == 1 and k_busy > 1      # GPU cost alone favours one GPU; waiting costs buy speed


def test_scaling_finding_for_a_family_with_three_gpu_counts(tmp_path):
    con = build(tmp_path, [Charge("32.00", {"team": "a"}, "i-node", gpu_hours=8.0)], [], Config())
    for i, k in enumerate([1, 2, 4, 2]):
        dur = float(amdahl_comm_time(k, 8.0, 0.05, 0.01)) * 3600
        con.execute("""insert into runs (file_id, row_number, project, start_utc, end_utc, duration_s, energy_kwh,
            emissions_kg, gpu_model, gpu_count, gpu_count_mismatch, timezone_basis)
            values (2, ?, 'sweep', ?, ?, ?, 1.0, 0.4, 'A100-SXM4-40GB', ?, false, 'assumed_utc')""",
                    [i + 1, M0 + timedelta(days=i), M0 + timedelta(days=i, seconds=dur), dur, k])
    run_after_gpu_hours(con, Config())
    fit = con.execute("select serial_fraction, comm_fraction, k_used, k_opt, price_usd_per_gpu_h from int_scaling_fits").fetchall()
    (s, c, k_used, k_opt, price), = fit
    assert (s, c) == pytest.approx((0.05, 0.01), abs=1e-6) and k_used == 2 and price == pytest.approx(4.0)
    (subject, value, unit, saving, detail), = findings(con, "scaling_efficiency")
    assert subject == "sweep" and value == pytest.approx(efficiency(2, 0.05, 0.01)) and f"K* = {k_opt}" in detail


def test_codecarbon_energy_is_reconciled_with_telemetry_when_the_run_is_matchable(tmp_path):
    # two busy GPUs for 2 h at 0.3 kWh each per hour = 1.2 kWh; CodeCarbon says 1.5 kWh with PUE 1.25
    con = build(tmp_path, [], busy("GPU-a", 2, 0.9) + busy("GPU-b", 2, 0.9), Config(namespace_teams=NS, hosts=HOSTS))
    for i, (gpus, kwh) in enumerate([(2, 1.5 * 1.25), (2, 1.2 * 1.25), (4, 9.9)]):
        con.execute("""insert into runs (file_id, row_number, run_id, project, start_utc, end_utc, duration_s, energy_kwh,
            gpu_energy_kwh, emissions_kg, gpu_model, gpu_count, pue, gpu_count_mismatch, timezone_basis)
            values (2, ?, ?, 'job', ?, ?, 7200, ?, ?, 0.4, 'A100-SXM4-40GB', ?, 1.25, false, 'assumed_utc')""",
                    [i + 1, f"run-{i}", M0, M0 + timedelta(hours=2), kwh, kwh, gpus])
    run_after_gpu_hours(con, Config(namespace_teams=NS, hosts=HOSTS))
    got = findings(con, "energy_gap")
    # run-1 agrees, run-2 asked for 4 GPUs while 2 were busy: not matchable
    assert [(s, round(v, 6)) for s, v, *_ in got] == [("job/run-0", -0.3)]
