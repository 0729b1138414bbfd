"""Slurm accounting (sacct --parsable2): jobs, steps counted once, located rejects, the layouts
refused with their fix; and the owned cluster's cost pool through the chargeback."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main

DATA = Path(__file__).parent / "data" / "slurm"


def ingest(warehouse: Path, *args: str | Path) -> tuple[int, dict, str]:
    res = CliRunner().invoke(main, ["ingest", *map(str, args), "--warehouse", str(warehouse), "--json"])
    out = res.stdout
    files = json.loads(out[:out.rindex("}") + 1])["files"] if "{" in out else [{}]
    return res.exit_code, files[0], res.output


def query(warehouse: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_jobs_load_with_their_gpus_and_steps_add_no_gpu_time(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, DATA / "sacct_month.txt")
    assert code == 0 and f["kind"] == "slurm" and f["status"] == "loaded", out
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (7, 7, 0)
    # 1001: 8 GPUs x 10 h (its .batch and .0 steps run inside it); 1002_3: 2 x 2 h; 1003+0: 2 x 1 h;
    # the CPU job and the pending one hold no GPU time
    assert f["totals"] == {"jobs": 5, "steps": 2, "gpu_hours": 86.0}
    rows = dict((r[0], r[1:]) for r in query(wh, "select job_id, job_key, is_step, gpus, gpu_type, state from slurm_jobs"))
    assert rows["1001.0"] == ("1001", True, 8.0, "h100", "COMPLETED")
    # typed count only (gres/gpu:h100=2); "CANCELLED by 1234" is CANCELLED
    assert rows["1002_3"] == ("1002_3", False, 2.0, "h100", "CANCELLED")
    assert rows["1003+0"][:3] == ("1003+0", False, 2.0)
    assert query(wh, "select start_utc, end_utc from slurm_jobs where job_id = '1005'") == [(None, None)]


def test_row_problems_are_located_rejects(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, DATA / "sacct_bad_rows.txt")
    assert code == 0 and f["rows_read"] == f["rows_loaded"] + f["rows_rejected"] == 7, out
    checks = {(r, c) for r, c in query(wh, "select row_number, check_name from rejects")}
    assert checks == {(2, "field_count"), (3, "timestamp"), (4, "end_after_start"), (5, "gpu_count"),
                      (6, "one_row_per_job")}
    # a running job ends at Start + ElapsedRaw
    assert query(wh, "select gpus, gpu_type, end_utc::varchar from slurm_jobs where job_id = '2006'") == \
        [(2.0, "a100", "2026-10-06 00:30:00")]


def test_noheader_export_in_the_documented_order(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, DATA / "sacct_noheader.txt")
    assert code == 0 and f["format_version"] == "parsable2-noheader", out
    assert f["totals"] == {"jobs": 1, "steps": 1, "gpu_hours": 8.0}
    assert query(wh, "select consumed_energy_j from slurm_jobs where is_step") == [(1800000.0,)]


def test_times_in_the_clusters_zone(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, DATA / "sacct_noheader.txt", "--timezone", "Europe/Paris")
    assert code == 0 and f["notes"] == [], out
    assert query(wh, "select start_utc::varchar from slurm_jobs where job_id = '3001'") == [("2026-10-06 22:00:00",)]


def test_fixed_width_table_is_refused_with_the_fix(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, _, out = ingest(wh, DATA / "sacct_fixed_width.txt")
    assert code == 1
    assert "fixed-width" in out and "--parsable2" in out and "Traceback" not in out


# --- an owned cluster's cost pool, through the chargeback ---------------------------------------
# lab.toml: 16 H100-SXM5-80GB GPUs, the defaults of sources/reference: 37,500 USD per GPU
# (capital_costs.csv) over 4 years (hardware_lifetime_years = 48 months), no energy measured, so
# the running cost with power included (owned_opex_usd_per_gpu_month = 250 USD).
# Pool = 16 x (37,500 / 48 + 250) = 16 x 1,031.25 = 16,500.00 USD over 16 x 744 h = 11,904 GPU-hours.
POOL_USD = 16_500.00
PHYSICS_USD = 110.89          # job 1001: 80 GPU-hours x 16,500 / 11,904 = 110.887
CHEM_USD = 5.54 + 2.77        # 1002_3: 4 GPU-hours (5.544), 1003+0: 2 GPU-hours (2.772), each to the cent
IDLE_USD = POOL_USD - PHYSICS_USD - CHEM_USD


def chargeback(tmp_path: Path, config_text: str, *inputs: Path) -> tuple[dict[str, float], Path]:
    """Ingest, report the October chargeback; each team's billed cost from its CSV."""
    import csv
    wh, config = tmp_path / "w.duckdb", tmp_path / "meterbook.toml"
    config.write_text(config_text, encoding="utf-8")
    for path in inputs:
        code, f, out = ingest(wh, path)
        assert code == 0 and f["status"] == "loaded", out
    res = CliRunner().invoke(main, ["report", "chargeback", "--month", "2026-10", "--warehouse", str(wh),
                                    "--config", str(config), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    with (tmp_path / "out" / "chargeback.csv").open(encoding="utf-8") as fh:
        return {r["team"]: float(r["billed_cost"]) for r in csv.DictReader(fh)}, wh


def test_cluster_without_a_bill_is_charged_back_from_its_cost_pool(tmp_path: Path) -> None:
    teams, wh = chargeback(tmp_path, (DATA / "lab.toml").read_text(encoding="utf-8"), DATA / "sacct_month.txt")
    assert teams == {"physics-dept": PHYSICS_USD, "chem": CHEM_USD, "unallocated": round(IDLE_USD, 2)}
    assert round(sum(teams.values()), 2) == POOL_USD                     # conserved to the cent
    pool = query(wh, "select capital_usd, running_usd, power_usd, pool_usd, capacity_gpu_hours, used_gpu_hours "
                     "from int_cost_pool")
    assert pool == [(12_500.0, 4_000.0, 0.0, POOL_USD, 11_904.0, 86.0)]
    assert query(wh, "select basis, invoice_amount, allocated_billed_cost, status from reconciliation") == \
        [("cost pool", POOL_USD, POOL_USD, "reconciled")]
    assert query(wh, "select distinct category, rule from allocation_lines where team = 'unallocated' and meter = 'billed_cost'") == \
        [("unallocated_capacity", "owned_capacity:unallocated")]
    from tests.pdf_helpers import text
    page1 = " ".join(text(tmp_path / "out" / "chargeback.pdf").split())
    assert "reconciled to the cost pool" in page1
    assert "Status: reconciled to cost pool lab 2026-10; allocated USD 16,500.00." in page1
    # the cluster's unallocated capacity is spent capital: the action is to use it, not to scale down
    assert "Unallocated owned GPU capacity" in page1 and "Schedule more work onto the owned GPUs" in page1
    assert "Scale the node group down" not in page1


def test_idle_capacity_follows_the_idle_rule(tmp_path: Path) -> None:
    config = (DATA / "lab.toml").read_text(encoding="utf-8").replace('idle = "unallocated"', 'idle = "proportional"')
    teams, wh = chargeback(tmp_path, config, DATA / "sacct_month.txt")
    # the idle line over the teams that used the cluster, by their GPU-hours: 80 : 6
    assert abs(teams["physics-dept"] - (PHYSICS_USD + IDLE_USD * 80 / 86)) <= 0.01
    assert round(sum(teams.values()), 2) == POOL_USD and "unallocated" not in teams
    # no telemetry covers the cluster, yet the idle rule charges each team its unused GPU-hours:
    # the team's page states that cost, as its Lines do, not "unknown"
    from tests.pdf_helpers import text
    pages = " ".join(text(tmp_path / "out" / "chargeback.pdf").split())
    (idle_cost,), = query(wh, "select unallocated_capacity_cost from team_month where team = 'physics-dept'")
    assert idle_cost > 0 and "unknown: no telemetry" not in pages
    # all of it is the cluster's unallocated capacity (GPU-hours no job held), not idle GPU time
    (capacity_h,), = query(wh, "select unallocated_capacity_gpu_hours from team_month where team = 'physics-dept'")
    assert f"Effective cost of unallocated capacity USD {idle_cost:,.2f}" in pages
    assert f"Unallocated capacity: {capacity_h:,.1f} GPU-hours of an owned cluster that no Slurm job held" in pages
    assert f"charged USD {idle_cost:,.2f} (effective)" in pages
    assert "Effective cost of idle GPU time USD 0.00" in pages and "The idle rule charges it" not in pages


def test_unallocated_capacity_is_named_where_its_lines_are_made(tmp_path: Path) -> None:
    """The cluster's IdleCapacity line is shared by the idle rule under its own category and rule,
    so every mart after allocation_lines carries the name; team_month's idle_cost holds idle GPU
    time only and unallocated_capacity_cost the capacity, together what the idle rule shared."""
    config = (DATA / "lab.toml").read_text(encoding="utf-8").replace('idle = "unallocated"', 'idle = "proportional"')
    _, wh = chargeback(tmp_path, config, DATA / "sacct_month.txt")
    assert query(wh, """select distinct category, rule from allocation_lines where resource_id = 'lab:idle'""") == \
        [("unallocated_capacity", "owned_capacity:proportional")]
    shared = dict(query(wh, """select team, sum(amount)::double from allocation_lines
                               where meter = 'effective_cost' and (rule like 'idle:%' or rule like 'owned_capacity:%')
                               group by team"""))
    months = query(wh, "select team, idle_cost::double, unallocated_capacity_cost::double from team_month where team <> 'unallocated'")
    assert {t: round(i + c, 2) for t, i, c in months} == {t: round(a, 2) for t, a in shared.items()}
    assert all(i == 0 for _, i, _ in months) and all(c > 0 for *_, c in months)
    reporting = query(wh, "select team, idle_cost::double, unallocated_capacity_cost::double from team_month_reporting where team <> 'unallocated'")
    assert sorted(reporting) == sorted(months)


def test_the_chargeback_reads_unallocated_capacity_from_the_marts() -> None:
    """Page 1, the team pages and the statements take the category, rule and cost as the marts
    give them: no report relabels a line or subtracts one cost from another."""
    source = (Path(__file__).parents[1] / "reports" / "chargeback.py").read_text(encoding="utf-8")
    assert "owned_capacity" not in source and "capacity_cost =" not in source
    assert "idle_time_cost" not in (Path(__file__).parents[1] / "templates" / "partials" / "team_page.html").read_text(encoding="utf-8")


def chargeback_with_one_metered_host(tmp_path: Path, cluster: str, telemetry: str) -> tuple[dict[str, float], Path]:
    """The lab cluster with gpu-a01 drawing 300 W and 150 W for one hour (0.45 kWh), power priced
    at 0.30 USD/kWh; `cluster` and `telemetry` add lines to those tables."""
    from tests.test_nvidia_smi import UUID_A, UUID_B, write_constant_power_log
    log = tmp_path / "gpu-a01.csv"
    write_constant_power_log(log, {UUID_A: 300, UUID_B: 150}, interval_s=10, hours=1)
    config = (DATA / "lab.toml").read_text(encoding="utf-8") + \
        f'hosts = ["gpu-a01"]\n{cluster}electricity_usd_per_kwh = 0.30\n[telemetry]\ninterval_s = 10\n{telemetry}'
    return chargeback(tmp_path, config, DATA / "sacct_month.txt", log)


def test_measured_energy_prices_the_power(tmp_path: Path) -> None:
    # gpu-a01 (a host of the cluster) draws 300 W and 150 W for one hour: 0.45 kWh; PUE 1.5 at
    # 0.30 USD/kWh is 0.2025 USD. The running cost is operations (owned_ops_usd_per_gpu_month =
    # 160) plus, for the 11,902 of 11,904 GPU-hours no telemetry covers, the power inside the running
    # cost (250 - 160 = 90 per GPU-month): 16 x (37,500 / 48 + 160 + 90 x 11,902 / 11,904) + 0.2025
    # = 16,499.96 USD. Two measured GPU-hours price two GPU-hours' power, not the month's.
    teams, wh = chargeback_with_one_metered_host(tmp_path, 'pue = 1.5\n', '')
    (kwh, power, pool, basis), = query(wh, "select facility_energy_kwh, power_usd, pool_usd, power_basis from int_cost_pool")
    assert (round(kwh, 4), round(power, 4), pool, basis) == (0.675, 0.2025, 16_499.96, "measured energy x price for 2.0 of 11904.0 GPU-hours, the rest in the running cost")
    assert round(sum(teams.values()), 2) == pool


def test_an_unknown_facility_has_one_pue_on_every_path(tmp_path: Path) -> None:
    # an owned cluster with measured energy and no pue of its own: its cost pool prices the
    # facility overhead, and its zone (no provider row) grosses up the same energy for carbon.
    # Both read the one unknown-facility default, value and range alike.
    _, wh = chargeback_with_one_metered_host(tmp_path, '', 'default_zone = "onprem:lab"\n')
    (kwh, ids), = query(wh, "select facility_energy_kwh, assumption_ids from int_cost_pool")
    (pue, low, high, pue_id), = query(wh, "select pue, pue_low, pue_high, pue_id from int_zone_factors "
                                          "where zone = 'onprem:lab'")
    (value, lo, hi), = query(wh, "select value, low, high from ref_assumptions where assumption_id = 'pue_unknown'")
    assert pue_id == "assumptions:pue_unknown" and pue_id in ids
    assert (pue, low, high) == (value, lo, hi) and round(kwh, 6) == round(0.45 * pue, 6)


def test_the_pool_uses_the_owned_hardware_findings_formula(tmp_path: Path) -> None:
    # the config's own figures replace the defaults (and carry no range): capital 24,000 USD per
    # GPU over 3 years; no energy measured, so the running cost with power included (250, 120-500)
    # 16 x (24,000 / 36 + 250) = 14,666.67, low 16 x (666.67 + 120), high 16 x (666.67 + 500)
    config = (DATA / "lab.toml").read_text(encoding="utf-8") + "capex_usd_per_gpu = 24000\nlifetime_years = 3\n"
    _, wh = chargeback(tmp_path, config, DATA / "sacct_month.txt")
    (pool, low, high), = query(wh, "select pool_usd, pool_usd_low, pool_usd_high from int_cost_pool")
    assert (pool, round(low, 2), round(high, 2)) == (14_666.67, 12_586.67, 18_666.67)


# --- DCGM job statistics (dcgmi stats --job --verbose) ------------------------------------------
STATS = Path(__file__).parent / "data" / "dcgmi_stats"


def test_job_statistics_give_each_gpus_measured_energy(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, STATS / "job_1001_two_gpus.txt")
    assert code == 0 and f["kind"] == "dcgmi-stats" and f["format_version"] == "verbose", out
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (2, 2, 0)
    # 500 W and 250 W for 10 h: 18 MJ and 9 MJ, 7.5 kWh together
    assert f["totals"] == {"jobs": 1, "gpu_blocks": 2, "energy_j": 27_000_000.0}
    assert query(wh, "select job_id, gpu_id, start_utc::varchar, end_utc::varchar, energy_j, power_w_avg, sm_util_avg "
                     "from dcgm_job_stats order by gpu_id") == [
        ("1001", 0, "2026-10-01 00:00:00", "2026-10-01 10:00:00", 18_000_000.0, 500.0, 0.81),
        ("1001", 1, "2026-10-01 00:00:00", "2026-10-01 10:00:00", 9_000_000.0, 250.0, 0.40)]


def test_job_statistics_no_gpu_can_produce_are_rejects(tmp_path: Path) -> None:
    wh = tmp_path / "w.duckdb"
    code, f, out = ingest(wh, STATS / "job_implausible_energy_and_no_end.txt")
    assert code == 0 and (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (2, 0, 2), out
    # 360 MJ over 2 h is 50 kW from one GPU; a job never stopped has no end
    assert {(r, c) for r, c in query(wh, "select row_number, check_name from rejects")} == \
        {(1, "plausible_power"), (2, "timestamp")}


# --- the demo's on-premises cluster ----------------------------------------------------------------

def test_demo_cluster_alone_is_charged_back_from_its_pool(tmp_path: Path) -> None:
    """The demo month's Slurm export alone (no cloud bill) with the demo's meterbook.toml.
    hpc-lab: 16 H100 for 744 h = 11,904 GPU-hours, pool 16 x (37,500 / 48 + 250) = 16,500.00.
    Jobs: 5001 8 GPUs x 48 h = 384 (its .batch and .0 steps add nothing), 5004 4 x 12 h to the
    month's end, running (48) -> physics 432 GPU-hours; 5002_1 and 5002_2 2 x 6 h -> chemistry 24;
    5003 16 x 36 h, cancelled -> research 576; 5005 is pending. Each job's share to the cent:
    physics 532.26 + 66.53, chemistry 16.63 x 2, research 798.39; the idle 15,069.56 over the
    three by their GPU-hours (the demo's idle rule is proportional)."""
    demo = tmp_path / "demo"
    res = CliRunner().invoke(main, ["demo", "--month", "2026-10", "--out", str(demo)])
    assert res.exit_code == 0, res.output
    teams, wh = chargeback(tmp_path, (demo / "meterbook.toml").read_text(encoding="utf-8"),
                           demo / "slurm" / "sacct-2026-10.txt")
    direct = {"physics": 532.26 + 66.53, "chemistry": 16.63 * 2, "research": 798.39}
    gpu_hours = {"physics": 432, "chemistry": 24, "research": 576}
    idle = POOL_USD - sum(direct.values())
    assert round(idle, 2) == 15_069.56
    assert set(teams) == set(direct) and round(sum(teams.values()), 2) == POOL_USD
    for team, cost in direct.items():
        assert abs(teams[team] - (cost + idle * gpu_hours[team] / 1032)) <= 0.01
    assert query(wh, "select used_gpu_hours, idle_gpu_hours from int_cost_pool") == [(1032.0, 10_872.0)]


# The demo's slurm folder also holds an hour of each node's telemetry: those 16 GPU-hours' power
# is measured (6.71933 kWh x pue_unknown 1.56 x 0.10 USD/kWh = 1.05 USD); the other 11,888 keep
# the power inside the running cost: 16 x (37,500 / 48 + 160 + 90 x unpriced share) + 1.05.
DEMO_POOL_USD = 16_499.11


def test_demo_cluster_nodes_measure_their_jobs(tmp_path: Path) -> None:
    """hpc-a01 (dcgm-exporter, hpc_job labels) carries 5001 on its 8 GPUs at 610 W for an hour
    of scrapes every 30 s: 119 intervals x 30 s x 8 x 610 W = 4.8393 kWh, the job's own.
    hpc-a02 (an nvidia-smi log only) carries 5002_1 (2 GPUs at 420 W) and 5002_2 (2 at 380 W)
    beside 4 idle GPUs at 70 W: 1.88 kWh in the hour, each job 2 of the node's 8 GPUs, 0.47 kWh
    (no series names the job, so the node splits by GPU share); the idle GPUs' part (0.94) is the
    idle line's. The rest of each job's GPU-hours is estimated from rated power."""
    demo = tmp_path / "demo"
    res = CliRunner().invoke(main, ["demo", "--month", "2026-10", "--out", str(demo)])
    assert res.exit_code == 0, res.output
    teams, wh = chargeback(tmp_path, (demo / "meterbook.toml").read_text(encoding="utf-8"), demo / "slurm")
    rows = query(wh, """select resource_id, tiers, round(it_energy_kwh, 4), gpu_hours from int_energy_base
                        where basis = 'measured' order by resource_id""")
    assert rows == [("hpc-lab:idle", ["power_integral"], 0.94, 4.0),
                    ("hpc-lab:job:5001", ["hpc_job"], 4.8393, 8.0),
                    ("hpc-lab:job:5002_1", ["node_share"], 0.47, 2.0),
                    ("hpc-lab:job:5002_2", ["node_share"], 0.47, 2.0)]
    assert query(wh, "select pool_usd from int_cost_pool") == [(DEMO_POOL_USD,)]
    assert round(sum(teams.values()), 2) == DEMO_POOL_USD
    # an hour of telemetry covers that hour's GPU-hours, not the month the job or the idle line
    # was billed for: 16 of the cluster's 11,904 GPU-hours were seen, on every page alike
    seen = query(wh, """select resource_id, round(gpu_hours_billed * telemetry_share, 6) from int_resource_coverage
                        where telemetry_share > 0 order by 1""")
    assert seen == [("hpc-lab:idle", 4.0), ("hpc-lab:job:5001", 8.0), ("hpc-lab:job:5002_1", 2.0), ("hpc-lab:job:5002_2", 2.0)]
    (fleet,), = query(wh, "select round(gpu_hours_billed_with_telemetry, 6) from telemetry_month")
    (by_team,), = query(wh, "select round(sum(gpu_hours_with_telemetry), 6) from team_coverage_month")
    assert fleet == by_team == 16.0


def test_a_cluster_beside_the_cloud_bill_moves_no_cloud_team(demo_billing: Path, tmp_path: Path) -> None:
    """The demo's bills alone, then with its Slurm folder: the pool is 16,499.11 more in all, and
    every team the bills charge keeps its figure (the pool takes no share of shared services,
    commitments or credits); the cluster's teams get exactly the pool."""
    import csv
    import shutil
    config = demo_billing / "demo" / "meterbook.toml"

    def teams(wh: Path, out: Path) -> dict[str, float]:
        res = CliRunner().invoke(main, ["report", "chargeback", "--month", "2026-10", "--warehouse", str(wh),
                                        "--config", str(config), "--out", str(out)])
        assert res.exit_code == 0, res.output
        with (out / "chargeback.csv").open(encoding="utf-8") as fh:
            return {r["team"]: float(r["billed_cost"]) for r in csv.DictReader(fh)}

    wh = tmp_path / "wh.duckdb"
    shutil.copy(demo_billing / "wh.duckdb", wh)
    before = teams(wh, tmp_path / "before")
    code, f, out = ingest(wh, demo_billing / "demo" / "slurm")
    assert code == 0, out
    after = teams(wh, tmp_path / "after")
    cloud_only = set(before) - {"research"}          # research also runs jobs on the cluster
    assert {t: after[t] for t in cloud_only} == {t: before[t] for t in cloud_only}
    assert round(sum(after.values()) - sum(before.values()), 2) == DEMO_POOL_USD


# --- a job's energy on a node it shares ----------------------------------------------------------
# gpu-b01 (8 H100) runs 7001 (physics, GPUs 0-3) and 7002 (chemistry, GPUs 4-7) from 00:00 to
# 02:00 UTC on 2026-10-03. dcgm-exporter with --hpc-job-mapping-dir labels each GPU's series
# hpc_job="7001" or "7002"; its energy counters rise as 600 W (7001's GPUs) and 200 W (7002's)
# draw: 4 x 600 W x 2 h = 4.8 kWh and 4 x 200 W x 2 h = 1.6 kWh. sacct gives both jobs the
# node's ConsumedEnergyRaw over their window (23,040,000 J = 6.4 kWh): split by GPU share (4 of
# 8) that is 3.2 kWh each, the same for both, whatever each drew.
SHARED = """[teams.accounts]
physics = "physics-dept"
chemistry = "chem"
[allocation]
idle = "unallocated"
[[clusters]]
name = "lab"
gpus = 8
gpu_model = "H100-SXM5-80GB"
hosts = ["gpu-b01"]
[telemetry]
interval_s = 600
"""


def job_energy(wh: Path) -> dict[str, tuple]:
    """Each job's energy line (basis, tier, kWh, low, high); the marts keep their contracts."""
    assert query(wh, "select table_name, check_name, example from contract_findings") == []
    rows = query(wh, """select resource_id, basis, tiers, round(it_energy_kwh, 9), round(it_energy_kwh_low, 9),
                               round(it_energy_kwh_high, 9) from int_energy_base where resource_id like 'lab:job:%'""")
    return {r[0].split(":")[-1]: r[1:] for r in rows}


def test_jobs_sharing_a_node_get_their_own_gpus_energy_from_hpc_job_series(tmp_path: Path) -> None:
    teams, wh = chargeback(tmp_path, SHARED, DATA / "sacct_shared_node.txt", DATA / "dcgm_shared_node_hpc_job.prom")
    assert job_energy(wh) == {"7001": ("measured", ["hpc_job"], 4.8, 4.8, 4.8),
                              "7002": ("measured", ["hpc_job"], 1.6, 1.6, 1.6)}
    # the node's whole energy is the jobs': none of it is left on the idle line as measured
    assert query(wh, "select count(*) from int_energy_base where resource_id = 'lab:idle' and basis = 'measured'") == [(0,)]
    energy = dict(query(wh, """select team, sum(amount)::double from allocation_lines where meter = 'it_energy_kwh'
                               and team <> 'unallocated' group by team"""))
    assert energy == {"physics-dept": 4.8, "chem": 1.6}
    # the pool (8 x (37,500 / 48 + 160) + 6.4 kWh x PUE x price) is conserved to the cent
    (pool,), = query(wh, "select pool_usd from int_cost_pool")
    assert round(sum(teams.values()), 2) == pool and teams["physics-dept"] == teams["chem"]


def test_slurm_node_energy_alone_splits_a_shared_node_evenly(tmp_path: Path) -> None:
    config = SHARED.replace("[telemetry]\ninterval_s = 600\n", "")
    teams, wh = chargeback(tmp_path, config, DATA / "sacct_shared_node.txt")
    # the same 3.2 kWh for both (wrong, and what the hpc_job series correct); at most the node's 6.4
    assert job_energy(wh) == {"7001": ("estimated", ["slurm_node_energy"], 3.2, 3.2, 6.4),
                              "7002": ("estimated", ["slurm_node_energy"], 3.2, 3.2, 6.4)}
    (pool,), = query(wh, "select pool_usd from int_cost_pool")
    assert round(sum(teams.values()), 2) == pool


def test_job_statistics_come_before_slurms_node_energy(tmp_path: Path) -> None:
    # no series: 7002's dcgmi stats (4 GPUs x 1,440,000 J = 1.6 kWh, a meter's reading: no range)
    # win over Slurm's node energy; 7001, without statistics, keeps Slurm's even split
    config = SHARED.replace("[telemetry]\ninterval_s = 600\n", "")
    teams, wh = chargeback(tmp_path, config, DATA / "sacct_shared_node.txt",
                           STATS / "job_7002_four_gpus_shared_node.txt")
    assert job_energy(wh) == {"7001": ("estimated", ["slurm_node_energy"], 3.2, 3.2, 6.4),
                              "7002": ("measured", ["dcgm_job_stats"], 1.6, 1.6, 1.6)}
    assert dict(query(wh, "select tier, round(it_energy_kwh, 9) from energy_tiers_month where tier <> 'tdp_model'")) == \
        {"dcgm_job_stats": 1.6, "slurm_node_energy": 3.2}
    (pool,), = query(wh, "select pool_usd from int_cost_pool")
    assert round(sum(teams.values()), 2) == pool


def test_series_without_the_job_label_are_split_by_gpu_share_of_the_node(tmp_path: Path) -> None:
    # the same scrapes without --hpc-job-mapping-dir: each job takes its 4 of the node's 8 GPUs
    # in every hour its window touches, 6.4 kWh / 2 each, measured (the counter's range)
    plain = tmp_path / "gpu-b01.prom"
    text = (DATA / "dcgm_shared_node_hpc_job.prom").read_text(encoding="utf-8")
    plain.write_text(text.replace(',hpc_job="7001"', "").replace(',hpc_job="7002"', ""), encoding="utf-8")
    teams, wh = chargeback(tmp_path, SHARED, DATA / "sacct_shared_node.txt", plain)
    energy = job_energy(wh)
    assert {j: e[:2] for j, e in energy.items()} == {"7001": ("measured", ["node_share"]), "7002": ("measured", ["node_share"])}
    # the 02:00 hour holds the counter's last 10 minutes (0.1 kWh per 600 W GPU, 1/30 per 200 W
    # one) but lies outside both windows: that part stays on the idle line
    assert [e[2] for e in energy.values()] == [pytest.approx((6.4 - 4 * (0.1 + 0.2 / 6)) / 2)] * 2
    (pool,), = query(wh, "select pool_usd from int_cost_pool")
    assert round(sum(teams.values()), 2) == pool


def test_hostlist_names_every_host() -> None:
    from pipelines.warehouse import add_macros
    con = duckdb.connect()
    add_macros(con)
    assert con.execute("select hostlist('gpu-a[01-03,07],b2'), hostlist('n[8-10]-ib'), hostlist('gpu-a01')").fetchone() == \
        (["gpu-a01", "gpu-a02", "gpu-a03", "gpu-a07", "b2"], ["n8-ib", "n9-ib", "n10-ib"], ["gpu-a01"])


@pytest.fixture(scope="module")
def demo_cluster(tmp_path_factory) -> tuple[Path, str]:
    """The demo's Slurm folder (sacct export and an hour of each node's telemetry) charged back."""
    from tests.pdf_helpers import text
    tmp = tmp_path_factory.mktemp("demo_cluster")
    res = CliRunner().invoke(main, ["demo", "--month", "2026-10", "--out", str(tmp / "demo")])
    assert res.exit_code == 0, res.output
    _, wh = chargeback(tmp, (tmp / "demo" / "meterbook.toml").read_text(encoding="utf-8"), tmp / "demo" / "slurm")
    return wh, " ".join(text(tmp / "out" / "chargeback.pdf").split())


def test_a_cluster_teams_page_lists_its_slurm_jobs(demo_cluster: tuple[Path, str]) -> None:
    """physics ran 5001 (8 GPUs x 48 h, an hour of it seen by hpc_job series) and 5004 (4 x 12 h):
    its page lists both, GPU-hours from the accounting, the observed part and their GPUs' energy."""
    wh, pages = demo_cluster
    jobs = query(wh, """select job_id, team, account, gpu_hours, gpu_hours_observed, round(it_energy_kwh, 1)
                        from cluster_job_month order by job_id""")
    assert [j[:5] for j in jobs] == [("5001", "physics", "physics", 384.0, 8.0), ("5002_1", "chemistry", "chemistry", 12.0, 2.0),
                                     ("5002_2", "chemistry", "chemistry", 12.0, 2.0), ("5003", "research", "ml-research", 576.0, 0.0),
                                     ("5004", "physics", "physics", 48.0, 0.0)]
    energy = {j[0]: j[5] for j in jobs}
    physics = pages[pages.index("Team: physics"):]
    assert "No job of this team appears" not in physics[:physics.index("Unit economics")]
    assert f"physics 5001 lattice-qcd Slurm hpc-lab 384.0 8.0 {energy['5001']:,.1f}" in physics
    assert f"physics 5004 md-run Slurm hpc-lab 48.0 0.0 {energy['5004']:,.1f}" in physics


def test_a_clusters_unused_gpu_hours_are_unallocated_capacity_not_idle_time(demo_cluster: tuple[Path, str]) -> None:
    """hpc-lab's 10,872 GPU-hours no job held are its unallocated capacity, shared over physics,
    chemistry and research by their jobs' GPU-hours (432 : 24 : 576); telemetry saw 4 of them (an
    hour of hpc-a02's 4 free GPUs). Observed idle time (no workload on a GPU billed to the team)
    is another figure: none here, and the 4 seen hours are not counted in it again."""
    wh, pages = demo_cluster
    rows = query(wh, """select team, idle_gpu_hours, unallocated_capacity_gpu_hours, unallocated_capacity_gpu_hours_observed
                        from team_month_reporting order by team""")
    assert [r[1] for r in rows] == [0.0, 0.0, 0.0]
    assert round(sum(r[2] for r in rows), 3) == 10_872.0 and round(sum(r[3] for r in rows), 3) == 4.0
    physics = dict((r[0], r) for r in rows)["physics"]
    page = pages[pages.index("Team: physics"):]
    assert f"Unallocated capacity: {physics[2]:,.1f} GPU-hours of an owned cluster that no Slurm job held" in page
    assert f"Telemetry saw {physics[3]:,.1f} of them" in page
    assert "0.0 of 9.7 observed GPU-hours were idle" in page
    assert "Unallocated capacity Unallocated GPU capacity (no Slurm job held it)" in page
    assert "Idle GPU time, shared" not in page[:page.index("Unit economics")]
    summary = pages[pages.index("Unallocated and idle"):]
    assert "Unallocated capacity: 10,872.0 GPU-hours of owned clusters that no Slurm job held" in summary
