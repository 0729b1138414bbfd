"""Attribution keys (issue 4): telemetry joins charges through [hosts], the series' cloud
instance id label or the host name, in that order; what joins nothing is reported."""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from pipelines.config import Config
from pipelines.stages import run_stages
from pipelines.warehouse import add_macros, connect
from reports.chargeback import MATCHING_ROWS, build_context, report_html
from tests.allocation_fixtures import Charge, GpuHour, build
from tests.conftest import DATA, ingest_json
from tests.pdf_helpers import cli, text
from tests.telemetry_fixtures import Trace, write_prom_text

MONTH = "2026-10"
START = datetime(2026, 10, 6)
INTERVAL = 30
HOURS = 3
FOCUS_HEADER = (DATA / "focus" / "focus_1.2_minimal.csv").read_text(encoding="utf-8").splitlines()[0]


def gpu_trace(uuid: str = "GPU-aaaaaaaa-0000-0000-0000-000000000001", labels: str = "") -> Trace:
    """One A100 at 300 W for three full UTC hours from START, host label node-a (plus `labels`)."""
    return Trace(uuid=uuid, start=START, interval_s=INTERVAL, power_w=[300.0] * (HOURS * 3600 // INTERVAL),
                 extra_labels=labels)


def focus_hours(path: Path, resources: dict[str, str]) -> Path:
    """FOCUS 1.2: one on-demand g5.xlarge (1 GPU) hour per resource over the trace's hours,
    each resource tagged with its team."""
    rows = [FOCUS_HEADER]
    for rid, team in resources.items():
        for h in range(HOURS):
            rows.append(f"1.006,111122223333,Acme,USD,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,,"
                        f"$1.006 per On Demand Linux g5.xlarge Instance Hour,2026-10-06T0{h}:00:00Z,2026-10-06T0{h + 1}:00:00Z,"
                        f"1,Hours,1.006,1.006,AWS,us-east-1,{rid},Amazon Elastic Compute Cloud,Compute,Virtual Machines,"
                        f"INV-1,USD,Billing Account,\"{{\"\"team\"\":\"\"{team}\"\"}}\"")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def ingested(tmp_path: Path, traces: list[Trace], resources: dict[str, str]) -> duckdb.DuckDBPyConnection:
    """The traces and their bill through the real readers, then every stage (no [hosts])."""
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, write_prom_text(tmp_path / "dcgm.prom", traces), focus_hours(tmp_path / "focus.csv", resources))
    con = connect(wh)
    run_stages(con, Config(interval_s=INTERVAL))
    return con


def team_meters(con: duckdb.DuckDBPyConnection, team: str) -> tuple[float, float]:
    """(observed GPU-hours, measured IT kWh) the team received in the month."""
    row = con.execute("select gpu_hours_observed, it_energy_kwh_measured from team_month where month = ? and team = ?",
                      [MONTH, team]).fetchone()
    return row or (0.0, 0.0)


def matching(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("""select finding, subject, value, energy_kwh from findings_month
                          where finding in ('unmatched_host', 'unobserved_resource') order by finding, subject""").fetchall()


# ------------------------------------------------------------------ which label is the instance


@pytest.mark.parametrize("labels, expected", [
    ('gpu="0",instance_id="i-0abc"', "i-0abc"),
    ('InstanceID="i-0abc"', "i-0abc"),
    ('Hostname="n",ec2_instance_id="i-0abc"', "i-0abc"),
    ('node_instance_id="i-0abc"', "i-0abc"),
    ('instance_name="gke-a100-pool-1",instance_id="i-0abc"', "i-0abc"),          # an id before a name
    ('instance_name="gke-a100-pool-1"', "gke-a100-pool-1"),
    ('provider_id="aws:///us-east-1a/i-0abc"', "i-0abc"),
    ('providerID="gce://proj/us-central1-a/gke-a100-pool-1"', "gke-a100-pool-1"),
    ('provider_id="azure:///subscriptions/s1/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-gpu/virtualMachines/3"',
     "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-gpu"),
    ('provider_id="azure:///subscriptions/s1/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1"',
     "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1"),
    ('instance="10.0.0.7:9400",job="dcgm"', None),              # Prometheus' scrape target, not a cloud id
    ('vmId="0c6e4f0e-2b8a-4d1c-9a57-3f1e5b6d7a80"', None),       # no Azure cost export carries it
    ('provider_id="kind://docker/kind/kind-worker"', None),
])
def test_instance_label_reads_each_spelling(labels, expected):
    con = duckdb.connect()
    add_macros(con)
    assert con.execute("select instance_label(?)", [labels]).fetchone()[0] == expected


# ------------------------------------------------------------------ joining telemetry to charges


@pytest.mark.parametrize("labels, vision_gets_it", [(',instance_id="i-0lab"', True), ("", False)])
def test_instance_id_label_joins_the_charge_with_that_resource_id(tmp_path, labels, vision_gets_it):
    """The GPU ran no pod, so its time is idle and goes to the team billed for the node: only
    possible when telemetry finds the node's charge, here through the label alone."""
    t = gpu_trace(labels=labels)
    con = ingested(tmp_path, [t], {"i-0lab": "vision"})
    hours, kwh = team_meters(con, "vision")
    if vision_gets_it:
        assert con.execute("select distinct resource_id, resource_match from int_gpu_workloads").fetchall() == [("i-0lab", "label")]
        assert hours == pytest.approx(HOURS) and kwh == pytest.approx(t.true_kwh(), rel=1e-3)
        assert matching(con) == []
    else:
        assert (hours, kwh) == (0.0, 0.0)
        assert team_meters(con, "unallocated")[1] == pytest.approx(t.true_kwh(), rel=1e-3)


def test_hosts_table_beats_the_label(tmp_path):
    hours = [GpuHour("node-a", "GPU-a", h, 0.3, 0.9, {None: 120}, instance_id="i-0lab") for h in range(3)]
    charges = [Charge("3.00", {"team": "vision"}, "i-0lab", gpu_hours=3.0),
               Charge("3.00", {"team": "research"}, "i-0cfg", gpu_hours=3.0)]
    con = build(tmp_path, charges, hours, Config(hosts={"node-a": "i-0cfg"}))
    assert con.execute("select distinct resource_id, resource_match from int_gpu_workloads").fetchall() == [("i-0cfg", "hosts")]
    assert team_meters(con, "research")[0] == pytest.approx(3.0)
    assert team_meters(con, "vision")[0] == 0.0
    # ... and the labelled instance, now without telemetry, is reported as such
    assert [(f, s) for f, s, *_ in matching(con)] == [("unobserved_resource", "i-0lab")]


def test_label_matches_the_billed_id_whatever_its_case(tmp_path):
    """Azure writes one ARM id in several casings; telemetry takes the bill's spelling."""
    arm = "/subscriptions/s1/resourceGroups/RG/providers/Microsoft.Compute/virtualMachineScaleSets/aks-gpu"
    hours = [GpuHour("aks-node-3", "GPU-a", 0, 0.3, 0.9, {None: 120}, instance_id=arm)]
    con = build(tmp_path, [Charge("3.00", {"team": "vision"}, arm.lower(), gpu_hours=1.0)], hours, Config())
    assert con.execute("select resource_id, resource_match from int_gpu_workloads").fetchall() == [(arm.lower(), "label")]
    assert team_meters(con, "vision")[0] == pytest.approx(1.0)


def test_host_named_as_its_billed_resource_joins_without_a_mapping(tmp_path):
    hours = [GpuHour("gke-a100-pool-1", "GPU-a", 0, 0.3, 0.9, {None: 120})]
    con = build(tmp_path, [Charge("3.00", {"team": "vision"}, "gke-a100-pool-1", gpu_hours=1.0)], hours, Config())
    assert con.execute("select resource_id, resource_match from int_gpu_workloads").fetchall() == [("gke-a100-pool-1", "host_name")]
    assert team_meters(con, "vision")[0] == pytest.approx(1.0)


# ------------------------------------------------------------------ what joins nothing


def test_unmatched_host_and_unobserved_resource_are_findings_and_in_the_pdf(tmp_path):
    """node-a's telemetry joins no charge; i-0dark is billed GPU capacity nothing observed."""
    t = gpu_trace()
    con = ingested(tmp_path, [t], {"i-0dark": "vision"})
    (f1, host, host_h, host_kwh), (f2, res, res_h, res_kwh) = matching(con)
    assert (f1, host, f2, res) == ("unmatched_host", "node-a", "unobserved_resource", "i-0dark")
    assert host_h == pytest.approx(HOURS) and host_kwh == pytest.approx(t.true_kwh(), rel=1e-3)
    assert res_h == pytest.approx(HOURS) and res_kwh is None
    # not also a reconciliation gap: each side is reported once
    assert con.execute("select count(*) from findings_month where finding = 'gpu_hours_gap'").fetchone()[0] == 0
    con.close()
    out = tmp_path / "out"
    cli("report", "chargeback", "--month", MONTH, "--warehouse", str(tmp_path / "wh.duckdb"), "--out", str(out))
    body = re.sub(r"\s+", " ", text(out / "chargeback.pdf"))
    quality = body[body.rindex("Data quality"):]
    assert "Telemetry and the bill" in quality
    assert f"node-a Telemetry not on the bill {HOURS:.1f} {t.true_kwh():.1f}" in quality
    assert re.search(rf"i-0dark (paid by \S+ )?Billed GPUs without telemetry {HOURS:.1f} –", quality)
    assert "map it in [hosts] of meterbook.toml or label its series with the instance id" in quality


def test_a_long_unmatched_list_is_cut_with_a_count(tmp_path):
    extra = 2
    scrapes = write_prom_text(tmp_path / "one.prom", [gpu_trace()]).read_text().splitlines()
    fleet = scrapes[:2] + [ln.replace('Hostname="node-a"', f'Hostname="node-{i:02d}"').replace("GPU-aaaaaaaa", f"GPU-{i:08d}")
                           for i in range(MATCHING_ROWS + extra) for ln in scrapes[2:]]
    (tmp_path / "fleet.prom").write_text("\n".join(fleet) + "\n")
    ingest_json(tmp_path / "wh.duckdb", tmp_path / "fleet.prom", focus_hours(tmp_path / "focus.csv", {"i-0dark": "vision"}))
    con = connect(tmp_path / "wh.duckdb")
    run_stages(con, Config(interval_s=INTERVAL))     # the build step: the report only reads marts
    ctx = build_context(con, Config(interval_s=INTERVAL), MONTH)
    assert len(ctx["matching"]) == MATCHING_ROWS and ctx["matching_more"] == extra + 1    # + the unobserved i-0dark
    assert all(m["finding"] == "unmatched_host" for m in ctx["matching"])                 # hosts first
    assert not [f for f in ctx["findings"] if f["finding"] in ("unmatched_host", "unobserved_resource")]
    assert f"and {extra + 1} more" in report_html(ctx)


def test_month_without_telemetry_reports_no_unobserved_resources(tmp_path):
    """A fleet that is not instrumented at all is not one finding per resource."""
    con = build(tmp_path, [Charge("3.00", {"team": "vision"}, "i-0dark", gpu_hours=1.0)], [], Config())
    assert matching(con) == []


def test_findings_name_hostless_gpus_and_a_host_seen_under_two_ids_apart(tmp_path):
    """One finding per subject: GPUs without a host label, and a host whose instance id changed
    within the month (re-launched), each keep a subject of their own."""
    from pipelines.stages import contract_failures
    from schemas.findings_month import FindingsMonth
    busy_low = {"llm": 120}
    hours = [GpuHour(None, f"GPU-{g}", h, 0.2, 0.1, busy_low) for g in ("a", "b") for h in range(3)]
    hours += [GpuHour("ip-9", "GPU-c", h, 0.2, 0.9, busy_low, instance_id=iid)
              for h, iid in enumerate(["i-first", "i-first", "i-second"])]
    con = build(tmp_path, [Charge("10.00", {"team": "research"}, "i-billed", gpu_hours=1.0)], hours,
                Config(namespace_teams={"llm": "research"}))
    subjects = con.execute("""select finding, subject from findings_month
                              where finding in ('low_utilization', 'unmatched_host') order by all""").fetchall()
    assert len(subjects) == len(set(subjects))
    assert sum(f == "low_utilization" for f, _ in subjects) == 2
    assert sum(f == "unmatched_host" and s.startswith("ip-9") for f, s in subjects) == 2
    assert contract_failures(con, "findings_month", FindingsMonth) == []


def test_a_namespace_a_rule_maps_is_that_teams_job_on_its_page(tmp_path):
    """Namespaces become teams once, in SQL ([teams.namespaces], then [[teams.rules]]): a job in a
    namespace only a rule maps is its team's job in the chargeback, not an unallocated one."""
    from pipelines.config import TeamRule
    wh = tmp_path / "wh.duckdb"
    t = gpu_trace(labels=',namespace="ml-exp-7",pod="sweep-3",instance_id="i-0000000000000aaa"')
    ingest_json(wh, write_prom_text(tmp_path / "dcgm.prom", [t]), focus_hours(tmp_path / "focus.csv", {"i-0000000000000aaa": "vision"}))
    config = Config(interval_s=INTERVAL, team_rules=(TeamRule("namespace", None, "^ml-", "research"),))
    con = connect(wh)
    run_stages(con, config)
    assert con.execute("select team, namespace, pod from workload_month").fetchall() == [("research", "ml-exp-7", "sweep-3")]
    ctx = build_context(con, config, MONTH)
    jobs = {p["team"]["team"]: [j["job"] for j in p["jobs"]] for p in ctx["team_pages"]}
    assert jobs["research"] == ["sweep-3"] and "unallocated" not in jobs
