"""Shared GPUs, hand-computed: one GPU-hour per fixture (dcgm-exporter and kube-state-metrics text
in tests/data/sharing, 300 W for the hour = 0.3 kWh), billed on its own node, split the same way
for cost, GPU-hours, energy and CO2e by the rule of its sharing mode (docs/sharing.md)."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from core.sql import read_sql
from pipelines.config import Config
from pipelines.stages import apply_config, build_model, stages
from pipelines.warehouse import connect
from sources.reference_data import load_reference
from tests.allocation_fixtures import M0, Charge, GpuHour, build, insert_charges
from tests.conftest import DATA, ingest_json

SHARING = DATA / "sharing"
NAMESPACES = {"ns-a": "alpha", "ns-b": "beta", "ns-c": "gamma"}
HOSTS = {"node-mig": "i-mig", "node-hami": "i-hami", "node-ts": "i-ts", "node-runai": "i-runai"}
MIG = "mig_h100_1g_3g_three_idle_slices.prom"
HAMI = ("hami_four_quarter_pods.prom", "ksm_hami_four_quarter_requests.prom")
RUNAI = ("runai_two_fraction_pods.prom", "ksm_runai_gpu_fraction_half_and_quarter.prom")
TIME_SLICED = "time_sliced_two_pods_vgpu.prom"
TS_REQUESTS = "ksm_time_sliced_requests_1_and_3.prom"
METERS = ("billed_cost", "gpu_hours", "gpu_hours_observed", "it_energy_kwh", "co2e_kg")


def month(tmp: Path, files: list[str], resource: str, cost: str, **sharing: str) -> duckdb.DuckDBPyConnection:
    """The files ingested as a user would, one GPU-hour billed on `resource`, the marts built."""
    wh = tmp / "wh.duckdb"
    ingest_json(wh, *(SHARING / f for f in files))
    con = connect(wh)
    insert_charges(con, [Charge(cost, {}, resource, gpu_hours=1.0)])
    cfg = Config(namespace_teams=NAMESPACES, hosts=HOSTS, interval_s=600.0, default_zone="aws:us-east-1",
                 sharing={"charge_by": "request", "mig_slices": "compute", "mig_unused": "unallocated", **sharing})
    load_reference(con)
    apply_config(con, cfg)
    for model in stages():
        build_model(con, model)
    return con


def split(con: duckdb.DuckDBPyConnection, meter: str) -> dict[str, float]:
    """Each team's part of the meter, as a fraction of the meter's total."""
    rows = dict(con.execute("select team, sum(amount) from allocation_lines where meter = ? group by team", [meter]).fetchall())
    total = sum(rows.values())
    return {t: float(v / total) for t, v in rows.items() if v}


def amounts(con: duckdb.DuckDBPyConnection, meter: str) -> dict[str, Decimal]:
    rows = con.execute("select team, sum(amount) from allocation_lines where meter = ? group by team", [meter]).fetchall()
    return {t: v for t, v in rows if v}


def test_mig_h100_splits_by_compute_slices_and_leaves_three_idle_slices_unallocated(tmp_path):
    con = month(tmp_path, [MIG], "i-mig", "7.00")
    # 1g.10gb = 1 of 7 compute slices, 3g.40gb = 3 of 7, 3 slices no pod held
    assert amounts(con, "billed_cost") == {"alpha": Decimal("1.00"), "beta": Decimal("3.00"), "unallocated": Decimal("3.00")}
    for meter in ("gpu_hours", "gpu_hours_observed"):     # to the 1/1000 GPU-hour they round to
        assert split(con, meter) == pytest.approx({"alpha": 1 / 7, "beta": 3 / 7, "unallocated": 3 / 7}, abs=1e-3)
    # energy by each instance's GR_ENGINE_ACTIVE x slices: 0.5 x 1 : 0.25 x 3 = 2 : 3 of 0.3 kWh;
    # the unheld slices were not active and draw none; CO2e follows the energy
    kwh = amounts(con, "it_energy_kwh")
    assert kwh == {"alpha": Decimal("0.120"), "beta": Decimal("0.180")}
    assert split(con, "co2e_kg") == pytest.approx({"alpha": 0.4, "beta": 0.6}, abs=1e-3)
    rules = set(con.execute("select team, rule from allocation_lines where meter = 'billed_cost' and amount <> 0").fetchall())
    assert rules == {("alpha", "telemetry_split"), ("beta", "telemetry_split"), ("unallocated", "unallocated_capacity")}
    shares = con.execute("""select pod, sharing_mode, split_rule, energy_rule from int_gpu_shares order by pod nulls last""").fetchall()
    assert shares == [("infer-a-0", "mig", "mig_slices", "mig_activity"), ("train-b-0", "mig", "mig_slices", "mig_activity"),
                      (None, "mig", "mig_unallocated", "mig_unallocated")]


def test_mig_unused_slices_redistributed_by_slice_time_when_configured(tmp_path):
    con = month(tmp_path, [MIG], "i-mig", "7.00", mig_unused="slice_time")
    assert amounts(con, "billed_cost") == {"alpha": Decimal("1.75"), "beta": Decimal("5.25")}


def test_mig_by_memory_slices_when_configured(tmp_path):
    con = month(tmp_path, [MIG], "i-mig", "8.00", mig_slices="memory")
    # 1g.10gb holds 1 of 8 memory slices, 3g.40gb 4 of 8
    assert amounts(con, "billed_cost") == {"alpha": Decimal("1.00"), "beta": Decimal("4.00"), "unallocated": Decimal("3.00")}


def test_four_quarter_hami_pods_make_one_gpu_hour_split_by_request(tmp_path):
    con = month(tmp_path, list(HAMI), "i-hami", "4.00")
    # gpucores = 25 each: ns-a holds two pods, so half; activity (0.9, 0.1, 0.3, 0.7) does not count
    assert amounts(con, "billed_cost") == {"alpha": Decimal("2.00"), "beta": Decimal("1.00"), "gamma": Decimal("1.00")}
    for meter in ("gpu_hours", "gpu_hours_observed"):
        assert amounts(con, meter) == {"alpha": Decimal("0.500"), "beta": Decimal("0.250"), "gamma": Decimal("0.250")}
    assert amounts(con, "it_energy_kwh") == {"alpha": Decimal("0.150"), "beta": Decimal("0.075"), "gamma": Decimal("0.075")}
    assert split(con, "co2e_kg") == pytest.approx({"alpha": 0.5, "beta": 0.25, "gamma": 0.25}, abs=1e-3)
    assert {r for (r,) in con.execute("select distinct sharing_mode || ':' || split_rule from int_gpu_shares").fetchall()} \
        == {"fractional:requested_share"}


def test_hami_pods_charged_by_use_follow_their_activity(tmp_path):
    con = month(tmp_path, list(HAMI), "i-hami", "4.00", charge_by="use")
    # activity 0.9 + 0.1 : 0.3 : 0.7 of the pods' whole hour
    assert amounts(con, "billed_cost") == {"alpha": Decimal("2.00"), "beta": Decimal("0.60"), "gamma": Decimal("1.40")}


def test_runai_gpu_fraction_pods_are_fractional_requests_and_the_rest_is_idle(tmp_path):
    con = month(tmp_path, list(RUNAI), "i-runai", "3.00")
    # gpu-fraction 0.5 (annotation) and 0.25 (label): 1.50 and 0.75 direct; the unrequested
    # quarter is idle, shared 2 : 1 over the teams on the GPU; activity (0.4, 0.2) does not count
    assert amounts(con, "billed_cost") == {"alpha": Decimal("2.00"), "beta": Decimal("1.00")}
    rules = con.execute("""select team, rule, sum(amount) from allocation_lines where meter = 'gpu_hours_observed'
                           and amount <> 0 group by all order by all""").fetchall()
    assert [(t, r, round(float(v), 3)) for t, r, v in rules] == [
        ("alpha", "idle:proportional", 0.167), ("alpha", "telemetry_split", 0.5),
        ("beta", "idle:proportional", 0.083), ("beta", "telemetry_split", 0.25)]
    assert split(con, "it_energy_kwh") == pytest.approx({"alpha": 2 / 3, "beta": 1 / 3}, abs=1e-3)
    assert {r for (r,) in con.execute("select distinct sharing_mode || ':' || split_rule from int_gpu_shares").fetchall()} \
        == {"fractional:requested_share", "fractional:idle"}


@pytest.mark.parametrize(("files", "rule", "alpha", "beta"), [
    ([TIME_SLICED, TS_REQUESTS], "requested_share", "1.00", "3.00"),   # nvidia.com/gpu 1 : 3
    ([TIME_SLICED], "observed_activity", "3.00", "1.00"),             # no requests: activity 0.6 : 0.2
])
def test_two_time_sliced_pods_split_by_request_else_activity(tmp_path, files, rule, alpha, beta):
    con = month(tmp_path, files, "i-ts", "4.00")
    assert amounts(con, "billed_cost") == {"alpha": Decimal(alpha), "beta": Decimal(beta)}
    a, b = Decimal(alpha) / 4, Decimal(beta) / 4
    assert amounts(con, "gpu_hours") == {"alpha": a, "beta": b}
    assert amounts(con, "it_energy_kwh") == {"alpha": Decimal("0.3") * a, "beta": Decimal("0.3") * b}
    assert split(con, "co2e_kg") == pytest.approx({"alpha": float(a), "beta": float(b)}, abs=1e-3)
    assert {r for (r,) in con.execute("select distinct sharing_mode || ':' || split_rule from int_gpu_shares").fetchall()} \
        == {f"time_sliced:{rule}"}


def test_requests_are_read_from_kube_state_metrics_text(tmp_path):
    out = ingest_json(tmp_path / "wh.duckdb", SHARING / TS_REQUESTS)
    con = connect(tmp_path / "wh.duckdb")
    rows = con.execute("""select namespace, pod, node, resource, kind, value_sum / n_samples from gpu_request_parts
                          order by pod""").fetchall()
    assert rows == [("ns-b", "batch-y", "node-ts", "nvidia_com_gpu", "request", 3.0),
                    ("ns-a", "notebook-x", "node-ts", "nvidia_com_gpu", "request", 1.0)]
    assert con.execute("select count(*) from rejects").fetchone()[0] == 0
    assert out


def test_a_pod_that_requested_a_gpu_and_left_it_idle_is_a_finding_with_its_cost(tmp_path):
    hours = [GpuHour("ip-1", "GPU-1", h, 0.1, 0.01, {"ns-a": 120}) for h in range(3)]
    con = build(tmp_path, [Charge("30.00", {}, "i-1", gpu_hours=3.0)], hours, Config(namespace_teams=NAMESPACES, hosts={"ip-1": "i-1"}))
    assert con.execute("select count(*) from findings_month where finding = 'requested_idle'").fetchone()[0] == 0
    con.executemany("insert into gpu_request_parts values (3, ?, 'ns-a', 'ns-a-0', 'main', 'ip-1', 'nvidia_com_gpu', 'request', 1, 1)",
                    [[M0.replace(hour=h)] for h in range(2)])
    for folder, model in (("20_intermediate", "int_findings_utilization"), ("30_marts", "findings_month")):
        con.execute(f"create or replace table {model} as " + read_sql(folder, f"{model}.sql"))
    row = con.execute("select subject, team, value, cost_usd from findings_month where finding = 'requested_idle'").fetchone()
    assert row == ("ns-a/ns-a-0", "alpha", 2.0, 20.0)


def test_requests_are_read_from_a_query_range_answer(tmp_path):
    ingest_json(tmp_path / "wh.duckdb", SHARING / "ksm_requests_query_range.json")
    con = connect(tmp_path / "wh.duckdb")
    rows = con.execute("select pod, resource, value_sum / n_samples from gpu_request_parts order by pod").fetchall()
    assert rows == [("batch-y", "nvidia_com_gpu", 3.0), ("infer-z", "nvidia_com_mig_1g_10gb", 1.0), ("notebook-x", "nvidia_com_gpu", 1.0)]


def test_a_prometheus_pull_asks_for_the_gpu_requests_too():
    from sources.prometheus_pull import pulled_metrics, selector
    query = selector(pulled_metrics())
    assert "kube_pod_container_resource_requests" in query and "DCGM_FI_PROF_GR_ENGINE_ACTIVE" in query
    # DCGM series have no resource label (the empty alternative); cpu and memory requests are not pulled
    assert query.endswith(',resource=~"|nvidia[._]com[/_].*"}')


def test_the_demo_month_shares_gpus_in_every_mode_it_plants_and_bills_the_idle_mig_slice(chargeback_demo):
    """The demo's MIG H100 (1g + 3g + 2g instances, one slice never carved) and time-sliced L4
    (three pods requesting 1, 1 and 2 replicas) beside its whole GPUs, in the allocation and the PDF."""
    from tests.pdf_helpers import text
    with duckdb.connect(str(chargeback_demo["wh"]), read_only=True) as con:
        hours = dict(con.execute("""select sharing_mode || ':' || split_rule, sum(amount)::double from allocation_day
                                    where meter = 'gpu_hours_observed' and sharing_mode is not null group by 1""").fetchall())
        capacity = con.execute("""select resource_id, team, sum(amount)::double from allocation_day
                                  where rule = 'unallocated_capacity' and meter = 'gpu_hours' group by all""").fetchall()
        mig_cost = dict(con.execute("""select workload, sum(amount) from allocation_day where meter = 'billed_cost'
                                       and resource_id = 'i-0a5400000000005' group by 1""").fetchall())
    assert hours["whole:presence"] > 0
    assert hours["mig:mig_slices"] == pytest.approx(72 * 6 / 7, abs=1e-2)      # 72 h of the node, 6 of 7 slices held
    assert hours["time_sliced:requested_share"] == pytest.approx(100, abs=1e-2)
    assert capacity == [("i-0a5400000000005", "unallocated", pytest.approx(72 / 7, abs=1e-2))]
    # 72 h at USD 6.88 = 495.36: by compute slices 1 : 3 : 2 of 7, the seventh unallocated (to the
    # cent each hour, so a few cents from the month's exact sevenths)
    assert sum(mig_cost.values()) == Decimal("495.36")
    assert {k: float(v) for k, v in mig_cost.items()} == pytest.approx(
        {"jupyter-ana-0": 70.77, "lora-3b-0": 212.30, "jupyter-viz-0": 141.53, None: 70.77}, abs=0.05)
    body = text(chargeback_demo["out"] / "chargeback.pdf")
    assert "Shared GPUs" in body and "MIG instances" in body and "Time-sliced" in body
    shared = body[body.index("Shared GPUs"):body.index("Reconciliation to the bill")]
    assert "Unallocated GPU capacity (no pod held" in shared and "i-0a5400000000005 1 10.3 70.7" in shared


def test_utilization_nobody_measured_stays_unknown_in_the_reporting_currency(chargeback_demo):
    """The platform team's shared GPUs report no activity: its utilization is unknown in team_month,
    and summing its currencies into team_month_reporting must not turn that into 0 %."""
    with duckdb.connect(str(chargeback_demo["wh"]), read_only=True) as con:
        rows = con.execute("""select r.team, r.util_mean, m.util_mean from team_month_reporting r
                              join team_month m using (month, team)
                              where month = '2026-10' and m.gpu_hours_observed > 0""").fetchall()
    assert any(team == "platform" for team, _, _ in rows)
    for team, reporting, month_util in rows:
        assert (reporting is None) == (month_util is None), team
        if month_util is not None:
            assert reporting == pytest.approx(month_util), team


def test_no_share_of_the_demo_month_is_negative(chargeback_demo):
    """The capacity no pod held is the whole less the pods' shares: float noise there was a
    negative energy share (-2e-16) on the MIG node, which no GPU can draw."""
    with duckdb.connect(str(chargeback_demo["wh"]), read_only=True) as con:
        negative = con.execute("select count(*) from int_gpu_shares where share < 0 or energy_share < 0").fetchone()
        noise = con.execute("""select count(*) from int_gpu_shares
                               where split_rule = 'mig_unallocated' and energy_share > 0 and energy_share < 1e-9""").fetchone()
    assert negative == (0,) and noise == (0,)


def test_unused_gpu_time_has_its_cost_and_hours_under_one_name_on_the_demo(chargeback_demo):
    """The demo's MIG slice no pod held is unallocated capacity (docs/sharing.md), its cost and its
    GPU-hours alike. Its USD 70.77 was counted as idle cost beside 0 idle GPU-hours, so the
    unallocated team's page, the summary and chargeback.csv said "idle cost 70.77" for no idle
    hour, and the capacity's 10.3 GPU-hours stood under no name. Every team-month that counts a
    cost under a name counts hours under it too, in the marts and in the CSV a user signs."""
    import csv
    with duckdb.connect(str(chargeback_demo["wh"]), read_only=True) as con:
        marts = {table: con.execute(f"""select team, idle_cost::double, idle_gpu_hours, unallocated_capacity_cost::double,
                                        unallocated_capacity_gpu_hours, unallocated_capacity_gpu_hours_observed
                                        from {table} where month = '2026-10'""").fetchall()
                 for table in ("team_month", "team_month_reporting")}
    with open(chargeback_demo["out"] / "chargeback.csv", encoding="utf-8") as f:
        marts["chargeback.csv"] = [tuple(float(r[k] or 0) if k != "team" else r[k] for k in (
            "team", "idle_cost", "idle_gpu_hours", "unallocated_capacity_cost", "unallocated_capacity_gpu_hours",
            "unallocated_capacity_gpu_hours_observed")) for r in csv.DictReader(f)]
    for where, rows in marts.items():
        for team, idle_cost, idle_h, capacity_cost, capacity_h, _ in rows:
            assert (idle_cost != 0) == (idle_h > 0), (where, team, idle_cost, idle_h)
            assert (capacity_cost != 0) == (capacity_h > 0), (where, team, capacity_cost, capacity_h)
        unallocated = [r[1:] for r in rows if r[0] == "unallocated"]
        assert unallocated == [(0, 0, pytest.approx(70.77), pytest.approx(72 / 7, abs=1e-3), pytest.approx(72 / 7, abs=1e-3))], where


def test_a_nodes_energy_takes_the_rule_its_charges_took_on_the_demo(chargeback_demo):
    """A team page's Lines table says how each cost was split; the energy of the same GPU-hours
    sits on that row. Energy lines carried rule direct ("Own charges") where the node's cost was
    split by telemetry, so the telemetry-split row showed no energy and an "Own charges" row
    showed energy beside no GPU-hour of its own (platform: 40.1 kWh there)."""
    from reports.chargeback import team_lines
    with duckdb.connect(str(chargeback_demo["wh"]), read_only=True) as con:
        apart = con.execute("""
            with energy as (select distinct team, resource_id, rule from allocation_lines
                            where month = '2026-10' and currency is null and meter = 'facility_energy_kwh' and resource_id is not null),
                 charged as (select distinct team, resource_id, rule from allocation_lines
                             where month = '2026-10' and currency is not null and resource_id is not null)
            select e.* from energy e
            where e.resource_id in (select resource_id from charged)
              and (e.team, e.resource_id, e.rule) not in (select (team, resource_id, rule) from charged)
            order by all""").fetchall()
        lines = team_lines(con, "2026-10", "USD")
    assert apart == []
    # on the page: a row with energy has GPU-hours of its own, and each telemetry split carries energy
    assert [(t, r["rule"]) for t, rows in lines.items() for r in rows if r["facility_energy_kwh"] and r["gpu_hours"] is None] == []
    split = {t: r for t, rows in lines.items() for r in rows if r["rule"] == "telemetry_split"}
    assert set(split) == {"platform", "research", "search"} and all(r["facility_energy_kwh"] > 0 for r in split.values())
