"""Jobs of the work log (issue 22): MFU, cost, energy and CO2e per unit of work, computed by hand
for a dense and a mixture-of-experts job; a job on two teams' GPUs and a job across two months
split without counting anything twice; a job under its threshold named in the findings."""
from __future__ import annotations

import csv
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from pipelines.config import Config
from pipelines.ingest import ingest
from sources.reference_data import REFERENCE_DIR
from tests.allocation_fixtures import M0, Charge, GpuHour, build, run_after_gpu_hours

HEADER = "job_id,workload,namespace,pod,host,gpu_uuids,gpus,start_utc,end_utc,params,active_params,tokens,requests,precision,tokens_per_s"
CONFIG = Config(namespace_teams={"llm": "research", "embed": "search"}, hosts={"node-a": "i-a", "node-b": "i-b"},
                default_zone="aws:us-east-1")


def reference(name: str, **key: str) -> dict:
    with open(REFERENCE_DIR / f"{name}.csv", newline="", encoding="utf-8") as fh:
        return next(r for r in csv.DictReader(fh) if all(r[k] == v for k, v in key.items()))


def with_work(tmp: Path, con: duckdb.DuckDBPyConnection, rows: list[str], config: Config = CONFIG) -> None:
    """Ingest a work log CSV into a fixture warehouse, then rebuild the stages over it."""
    con.execute("select setval('file_id_seq', 100)")    # the fixture's charges use file id 1 unsequenced
    path = tmp / "work.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    (res,) = ingest(con, [path], config=config)
    assert (res.kind, res.rows_rejected) == ("work", 0)
    run_after_gpu_hours(con, config)


def job(con: duckdb.DuckDBPyConnection, job_id: str, month: str = "2026-10") -> list[dict]:
    cur = con.execute("select * from job_month where job_id = ? and month = ? order by team, currency", [job_id, month])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def iso(hour: int) -> str:
    return (M0 + timedelta(hours=hour)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def hand(tmp_path_factory) -> duckdb.DuckDBPyConnection:
    """Research runs a dense 1B model on 4 A100-40GB for 10 h (USD 400 billed); search a MoE
    (8B total, 1.5B active) on 2 of them for 10 h (USD 200), placed by host and GPU UUIDs."""
    tmp = tmp_path_factory.mktemp("hand")
    charges = [Charge("400", {"team": "research"}, "i-a", gpu_hours=40.0),
               Charge("200", {"team": "search"}, "i-b", gpu_hours=20.0)]
    hours = [GpuHour("node-a", f"GPU-a{g}", h, 0.3, 0.9, {"llm": 120}, tensor=0.5) for g in range(4) for h in range(10)]
    hours += [GpuHour("node-b", f"GPU-b{g}", h, 0.25, 0.8, {"embed": 120}, tensor=0.4) for g in range(2) for h in range(10)]
    con = build(tmp, charges, hours, CONFIG)
    with_work(tmp, con, [
        f"dense-1b,training,llm,llm-0,,,,{iso(0)},{iso(10)},1.0e9,,3.0e9,,bf16,8.0e4",
        f"moe-8x1b,training,,,node-b,GPU-b0;GPU-b1,,{iso(0)},{iso(10)},8.0e9,1.5e9,1.0e9,,bf16,",
    ])
    return con


@pytest.mark.parametrize("job_id, active_params, tokens, gpu_hours, cost_usd, it_kwh, tensor", [
    ("dense-1b", 1.0e9, 3.0e9, 40.0, 400.0, 40 * 0.3, 0.5),
    ("moe-8x1b", 1.5e9, 1.0e9, 20.0, 200.0, 20 * 0.25, 0.4),
])
def test_unit_economics_match_the_hand_computation(hand, job_id, active_params, tokens, gpu_hours, cost_usd, it_kwh, tensor):
    (row,) = job(hand, job_id)
    peak = float(reference("gpu_specs", gpu_model="A100-SXM4-40GB", metric="peak_flops_bf16")["value"])
    per_token = float(reference("assumptions", assumption_id="train_flops_per_param_token")["value"])
    pue, intensity = hand.execute("select pue, intensity_g_per_kwh from int_zone_factors where zone = 'aws:us-east-1'").fetchone()
    mfu = per_token * active_params * tokens / (gpu_hours * 3600 * peak)
    assert row["mfu"] == pytest.approx(mfu, rel=1e-9)
    assert 0.39 < mfu < 0.41                      # the fixture was sized for about 40 %
    assert row["cost_per_mtok"] == pytest.approx(cost_usd / (tokens / 1e6), rel=1e-9)
    assert row["kwh_per_mtok"] == pytest.approx(it_kwh * pue / (tokens / 1e6), rel=1e-9)
    assert row["gco2e_per_mtok"] == pytest.approx(it_kwh * pue * intensity / (tokens / 1e6), rel=1e-9)
    assert row["tensor_active_mean"] == pytest.approx(tensor)
    assert row["kwh_per_mtok_low"] <= row["kwh_per_mtok"] <= row["kwh_per_mtok_high"]
    assert row["gco2e_per_mtok_low"] <= row["gco2e_per_mtok"] <= row["gco2e_per_mtok_high"]
    assert (row["status"], row["gpus"], row["gpu_hours"]) == ("measured", 4 if job_id == "dense-1b" else 2, gpu_hours)


def test_the_jobs_own_throughput_log_gives_its_own_mfu(hand):
    (row,) = job(hand, "dense-1b")
    # 8e4 tokens/s over 10 h is 2.88e9 tokens against the 3.0e9 the log states
    assert row["mfu_logged"] == pytest.approx(row["mfu"] * 2.88e9 / 3.0e9, rel=1e-9)


def test_a_moe_job_is_measured_on_its_active_parameters_not_its_total(hand):
    (row,) = job(hand, "moe-8x1b")
    assert row["work_flops"] == pytest.approx(6 * 1.5e9 * 1.0e9)


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> duckdb.DuckDBPyConnection:
    """node-a (billed to research) runs research's llm on GPU-0 and search's embed on GPU-1 for 4 h;
    GPU-1 then idles 2 h. A bare-metal job placed by host covers both GPUs for 6 h; a second
    namespace-wide job overlaps it on research's GPU. Search also runs a job on a node of its
    own that telemetry never saw (billed hours only), and a job nobody's telemetry shows."""
    tmp = tmp_path_factory.mktemp("shared")
    charges = [Charge("300", {"team": "research"}, "i-a", gpu_hours=12.0),
               Charge("50", {}, None, service="Support", category="Tax"),
               Charge("80", {"team": "search"}, "i-c", gpu_hours=8.0)]
    hours = [GpuHour("node-a", "GPU-0", h, 0.3, 0.9, {"llm": 120}) for h in range(4)]
    hours += [GpuHour("node-a", "GPU-1", h, 0.25, 0.8, {"embed": 120}) for h in range(4)]
    hours += [GpuHour("node-a", "GPU-1", h, 0.05, 0.0, {None: 120}) for h in range(4, 6)]
    con = build(tmp, charges, hours, CONFIG)
    with_work(tmp, con, [
        f"bare,training,,,node-a,,,{iso(0)},{iso(6)},1.0e9,,1.0e9,,bf16,",
        f"overlap,training,llm,,,,,{iso(2)},{iso(4)},1.0e9,,1.0e8,,bf16,",
        f"billed,serving,,,i-c,,1,{iso(0)},{iso(4)},1.0e9,,1.0e9,1.0e6,bf16,",
        f"ghost,serving,ghost,,,,,{iso(0)},{iso(6)},1.0e9,,1.0e9,1.0e6,bf16,",
    ])
    return con


def test_a_job_on_two_teams_gpus_is_one_row_per_team(shared):
    rows = {r["team"]: r for r in job(shared, "bare")}
    assert set(rows) == {"research", "search"}
    # research: GPU-0's 4 h minus the 2 h the overlapping job shares (1 h to each), plus GPU-1's idle 2 h
    assert rows["research"]["gpu_hours"] == pytest.approx(3 + 2)
    assert rows["search"]["gpu_hours"] == pytest.approx(4)
    assert sum(r["tokens"] for r in rows.values()) == pytest.approx(1.0e9)
    assert rows["search"]["tokens"] == pytest.approx(1.0e9 * 4 / 9)


def test_no_gpu_hour_is_claimed_twice(shared):
    over = shared.execute("""
        select c.gpu_uuid, c.hour_start, sum(c.gpu_hours), any_value(w.h)
        from int_job_claims c
        join (select gpu_uuid, hour_start, sum(gpu_hours_observed) as h from int_gpu_workloads group by all) w
            using (gpu_uuid, hour_start)
        where c.basis = 'telemetry' group by all having sum(c.gpu_hours) > any_value(w.h) + 1e-9""").fetchall()
    assert over == []
    claimed = shared.execute("select sum(gpu_hours) from int_job_claims where basis = 'telemetry'").fetchone()[0]
    assert claimed == pytest.approx(10.0)       # the node's 10 GPU-hours, busy and idle, once


def test_jobs_covering_a_team_add_up_to_its_team_month(shared):
    for team in ("research", "search"):
        jobs = shared.execute("""select sum(effective_cost), sum(facility_energy_kwh), sum(co2e_kg), sum(gpu_hours_billed)
                                 from job_month where team = ?""", [team]).fetchone()
        whole = shared.execute("""select sum(effective_cost)::double, sum(facility_energy_kwh), sum(co2e_kg), sum(gpu_hours)
                                  from team_month where team = ?""", [team]).fetchone()
        assert jobs == pytest.approx(whole, rel=1e-9), team


def test_billed_hours_without_telemetry_are_an_estimate(shared):
    (row,) = job(shared, "billed")
    assert (row["team"], row["status"], row["gpu_hours"], row["gpu_hours_estimated"]) == ("search", "estimated", 8.0, 8.0)
    assert row["cost_per_k_requests"] == pytest.approx(row["effective_cost"] / 1.0e3)
    assert row["kwh_per_mtok_low"] < row["kwh_per_mtok"] < row["kwh_per_mtok_high"]


def test_a_job_no_gpu_time_was_found_for_is_listed_unpriced(shared):
    (row,) = job(shared, "ghost")
    assert (row["team"], row["status"], row["gpu_hours"], row["effective_cost"]) == ("unallocated", "uncovered", 0, 0)
    assert row["cost_per_mtok"] is None and row["mfu"] is None


def two_months(tmp: Path, with_september: bool) -> duckdb.DuckDBPyConnection:
    sep = datetime(2026, 9, 1)
    charges = [Charge("30", {"team": "research"}, "i-a", gpu_hours=3.0)]
    hours = [GpuHour("node-a", "GPU-0", h, 0.3, 0.9, {"llm": 120}) for h in range(3)]
    if with_september:
        charges.append(Charge("45", {"team": "research"}, "i-a", gpu_hours=3.0, start=sep))
        hours += [GpuHour("node-a", "GPU-9", h, 0.3, 0.9, {"llm": 120}) for h in range(-3, 0)]
    con = build(tmp, charges, hours, CONFIG)
    with_work(tmp, con, [f"across,training,llm,,,,,{iso(-3)},{iso(3)},1.0e9,,6.0e8,,bf16,"])
    return con


def test_a_job_across_two_months_is_split_by_its_window(tmp_path):
    (tmp_path / "both").mkdir()
    (tmp_path / "oct").mkdir()
    both, alone = two_months(tmp_path / "both", True), two_months(tmp_path / "oct", False)
    (sep,), (oct_,) = job(both, "across", "2026-09"), job(both, "across", "2026-10")
    assert (sep["tokens"], oct_["tokens"]) == (3.0e8, 3.0e8)
    assert (sep["gpu_hours"], oct_["gpu_hours"]) == (3.0, 3.0)
    assert (float(sep["effective_cost"]), float(oct_["effective_cost"])) == (45.0, 30.0)
    # October's row does not move when September is loaded beside it
    (oct_alone,) = job(alone, "across", "2026-10")
    assert {k: v for k, v in oct_alone.items() if k != "assumption_ids"} == {k: v for k, v in oct_.items() if k != "assumption_ids"}


def test_a_training_job_far_below_typical_mfu_is_a_finding_with_the_money_at_stake(tmp_path):
    charges = [Charge("100", {"team": "research"}, "i-a", gpu_hours=10.0)]
    hours = [GpuHour("node-a", "GPU-0", h, 0.3, 0.9, {"llm": 120}) for h in range(10)]
    con = build(tmp_path, charges, hours, CONFIG)
    # 10 GPU-hours at a 312 TFLOP/s bf16 peak; 1.0e7 tokens of a 1B model is 6e16 FLOPs: MFU 0.534 %
    with_work(tmp_path, con, [f"slow,training,llm,,,,,{iso(0)},{iso(10)},1.0e9,,1.0e7,,bf16,"])
    (f,) = con.execute("select value, low, high, cost_usd, subject, team, detail from findings_month where finding = 'low_mfu'").fetchall()
    typical = float(reference("assumptions", assumption_id="mfu_typical")["value"])
    mfu = 6e16 / (10 * 3600 * 312e12)
    assert f[:3] == pytest.approx((mfu, mfu, mfu))
    assert f[3] == pytest.approx(100 * (1 - mfu / typical))
    assert f[4:6] == ("slow", "research")
    assert "MFU 0.5%" in f[6]


def test_a_jobs_energy_is_its_own_gpus_and_only_money_is_pooled(tmp_path):
    """Research runs one job on i-a; it also pays for i-b, a node whose GPU no pod ever held
    (idle, drawing power: capacity nobody used, like an owned cluster's), and for support. The
    job carries i-a's energy, CO2e and GPU-hours alone, its share of the team's other money
    beside them, and its low-MFU finding prices only what it cost on i-a."""
    charges = [Charge("100", {"team": "research"}, "i-a", gpu_hours=10.0),
               Charge("300", {"team": "research"}, "i-b", gpu_hours=10.0),
               Charge("20", {"team": "research"}, None, service="Support", category="Tax")]
    hours = [GpuHour("node-a", "GPU-0", h, 0.3, 0.9, {"llm": 120}) for h in range(10)]
    hours += [GpuHour("node-b", "GPU-b0", h, 0.1, 0.0, {None: 120}) for h in range(10)]
    con = build(tmp_path, charges, hours, CONFIG)
    with_work(tmp_path, con, [f"slow,training,llm,,,,,{iso(0)},{iso(10)},1.0e9,,1.0e7,,bf16,"])
    (row,) = job(con, "slow")
    on_a = con.execute("""select sum(amount) filter (where meter = 'facility_energy_kwh'), sum(amount) filter (where meter = 'co2e_kg')
                          from allocation_lines where team = 'research' and resource_id = 'i-a'""").fetchone()
    on_a = tuple(float(x) for x in on_a)
    team = con.execute("select sum(facility_energy_kwh), sum(effective_cost)::double from team_month where team = 'research'").fetchone()
    assert float(team[0]) > on_a[0]           # i-b's idle energy is the team's ...
    assert (row["facility_energy_kwh"], row["co2e_kg"]) == pytest.approx(on_a)   # ... not the job's
    assert (row["gpu_hours_billed"], row["status"]) == (pytest.approx(10.0), "measured")
    assert float(row["effective_cost"]) == pytest.approx(team[1])                 # money is pooled whole
    assert float(row["effective_cost_other"]) == pytest.approx(320.0)
    (at_stake,) = con.execute("select cost_usd from findings_month where finding = 'low_mfu'").fetchone()
    mfu = 6e16 / (10 * 3600 * 312e12)
    typical = float(reference("assumptions", assumption_id="mfu_typical")["value"])
    assert at_stake == pytest.approx(100 * (1 - mfu / typical))


def test_a_teams_work_totals_are_in_the_reporting_currency_too(hand):
    """team_work_month rolls job_month_reporting up: its reporting figures are its jobs' converted
    ones (a USD month: the same as billed), so the totals line of a team page and its job table
    print one currency."""
    rows = hand.execute("""select w.team, w.workload, w.effective_cost_reporting, sum(j.effective_cost_reporting),
                                  w.cost_per_mtok_reporting, w.cost_per_mtok
                           from team_work_month w join job_month_reporting j using (month, team, workload, currency)
                           group by all order by 1""").fetchall()
    assert [r[:2] for r in rows] == [("research", "training"), ("search", "training")]
    for _, _, total, of_jobs, per_mtok_reporting, per_mtok in rows:
        assert float(total) == pytest.approx(float(of_jobs)) and per_mtok_reporting == pytest.approx(per_mtok)
