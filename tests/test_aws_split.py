"""AWS split cost allocation data (EKS pod rows in CUR legacy and CUR 2.0): the parent instance's
line is the bill, the pod rows re-describe it; the split is the allocation basis (provider_split)
of a node no telemetry covers, and is compared with telemetry's split where both cover it.

Fixture (tests/data/aws_cur/cur_eks_split_two_pods_and_unused.csv and its CUR 2.0 twin): one
p4d.24xlarge hour (8 GPUs, 96 vCPUs, 1152 GB) billed 32.832 USD; pod trainer-0 (namespace
research) holds 4 GPUs, 48 vCPUs, 576 GB, pod embedder-0 (search) 2, 24, 288; the rest is unused.
By AWS's weights (GPU 9 : vCPU 0.9 : GB 0.1) the unit cost is 32.832 / 273.6 = 0.12, so
research's split cost is 16.416, search's 8.208 and the unused cost 8.208."""
from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.config import Config
from sources.reference_data import assumption, read_rows
from tests.allocation_fixtures import GpuHour, build
from tests.conftest import DATA, ingest_json

LEGACY = DATA / "aws_cur" / "cur_eks_split_two_pods_and_unused.csv"
CUR2 = DATA / "aws_cur2" / "cur2_eks_split_two_pods_and_unused.csv"
NODE = "i-0eks0split0001"
PARENT_USD = Decimal("32.832")
TEAMS = Config(namespace_teams={"research": "research", "search": "search"})
CENT = Decimal("0.01")


def query(wh: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute(sql).fetchall()


def rewrite(src: Path, out: Path, edit) -> Path:
    """A copy of a fixture with edit(row dict) applied to every data row (None drops the row)."""
    with src.open(newline="") as f:
        rows = list(csv.DictReader(f))
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]))
        w.writeheader()
        w.writerows(r for r in map(edit, rows) if r is not None)
    return out


def allocated(con: duckdb.DuckDBPyConnection, meter: str = "billed_cost") -> dict[tuple[str, str], Decimal]:
    return dict(((t, r), a) for t, r, a in con.execute(
        "select team, rule, sum(amount) from allocation_lines where meter = ? group by all", [meter]).fetchall())


def test_the_fixture_is_aws_split_by_its_published_weights():
    """The fixture's split costs are what AWS's weights give for the instance's capacity."""
    w = {k: assumption(f"aws_split_weight_{k}")["value"] for k in ("gpu", "vcpu", "memory_gb")}
    (it,) = [r for r in read_rows("instance_types") if r["instance_type"] == "p4d.24xlarge"]
    capacity = w["gpu"] * float(it["gpu_count"]) + w["vcpu"] * float(it["vcpu"]) + w["memory_gb"] * float(it["memory_gib"])
    unit = float(PARENT_USD) / capacity
    with LEGACY.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["splitLineItem/ParentResourceId"]]
    weight = {"GPU": w["gpu"], "vCPU": w["vcpu"], "GB": w["memory_gb"]}
    for r in rows:
        kind = r["lineItem/UsageType"].split("-")[3]
        assert float(r["splitLineItem/SplitCost"]) == pytest.approx(unit * weight[kind] * float(r["splitLineItem/SplitUsage"]))
    total = sum(float(r["splitLineItem/SplitCost"]) + float(r["splitLineItem/UnusedCost"]) for r in rows)
    assert total == pytest.approx(float(PARENT_USD))


@pytest.mark.parametrize("path, kind", [(LEGACY, "aws-cur"), (CUR2, "aws-cur2")])
def test_split_rows_add_nothing_to_the_bill(tmp_path, path, kind):
    (f,) = ingest_json(tmp_path / "wh.duckdb", path)["files"]
    assert (f["kind"], f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (kind, 7, 7, 0)
    assert f["totals"]["billed_cost"] == pytest.approx(float(PARENT_USD))
    assert f["totals"]["gpu_hours"] == pytest.approx(8.0)          # the parent's 8 GPUs for an hour, once
    assert f["totals"]["findings"] == {}
    assert query(tmp_path / "wh.duckdb", """select count(*), sum(split_cost), sum(split_unused_cost), sum(billed_cost),
                                                   count(gpu_hours) from charges where split_parent_id = 'i-0eks0split0001'""") == [
        (6, Decimal("24.624"), Decimal("8.208"), 0, 0)]


def test_a_split_row_with_its_own_cost_loads_and_its_cost_is_counted_once(tmp_path):
    # AWS's split line item dictionary puts the pod's cost in SplitCost and does not promise that
    # the pod row's own lineItem/UnblendedCost is 0: where it is not, the row loads (its split is
    # the allocation basis), the node's line stays the bill and the row says what was not counted
    bad = rewrite(LEGACY, tmp_path / "cur_split_row_with_line_cost.csv",
                  lambda r: {**r, "lineItem/UnblendedCost": "4.32"} if r["identity/LineItemId"] == "li-trainer-0-GPU" else r)
    wh = tmp_path / "wh.duckdb"
    (f,) = ingest_json(wh, bad)["files"]
    assert (f["rows_read"], f["rows_loaded"], f["rows_rejected"]) == (7, 7, 0)
    assert f["totals"]["billed_cost"] == pytest.approx(float(PARENT_USD))
    assert f["totals"]["findings"] == {"split_row_line_cost_not_counted": 1}
    assert query(wh, "select row_number, check_name, value from row_findings") == [
        (2, "split_row_line_cost_not_counted", "4.32")]
    assert query(wh, "select sum(billed_cost), sum(effective_cost), sum(split_cost) from charges where split_parent_id is not null") == [
        (0, 0, Decimal("24.624"))]


def test_split_rows_without_their_parent_are_a_finding(tmp_path):
    (f,) = ingest_json(tmp_path / "wh.duckdb", DATA / "aws_cur" / "cur_eks_split_parent_missing.csv")["files"]
    assert (f["rows_read"], f["rows_loaded"], f["totals"]["billed_cost"]) == (6, 6, 0.0)
    assert f["totals"]["findings"] == {"split_parent_missing": 6}
    assert query(tmp_path / "wh.duckdb", "select first_row, example from findings") == [(1, NODE)]


def test_split_costs_short_of_their_parent_are_a_finding(tmp_path):
    # the parent billed 34.832, its pods' split and unused costs add up to 32.832
    (f,) = ingest_json(tmp_path / "wh.duckdb", DATA / "aws_cur" / "cur_eks_split_sum_short_of_parent.csv")["files"]
    assert f["totals"]["findings"] == {"split_sum_differs_from_parent": 6}
    assert query(tmp_path / "wh.duckdb", "select first_row, example from findings") == [
        (2, "i-0eks0split0001: 32.832000000000 vs 34.832000000000")]


@pytest.mark.parametrize("path", [LEGACY, CUR2])
def test_teams_get_aws_split_where_no_telemetry_covers_the_node(tmp_path, path):
    ingest_json(tmp_path / "wh.duckdb", path)
    con = build(tmp_path, [], [], TEAMS)
    cost = allocated(con)
    assert sum(cost.values()) == PARENT_USD                                     # the bill, once
    assert set(cost) == {("research", "provider_split"), ("search", "provider_split"),
                         ("unallocated", "unallocated_capacity")}
    assert abs(cost["research", "provider_split"] - Decimal("16.416")) < CENT
    assert abs(cost["search", "provider_split"] - Decimal("8.208")) < CENT
    assert abs(cost["unallocated", "unallocated_capacity"] - Decimal("8.208")) < CENT
    assert allocated(con, "gpu_hours") == {("research", "provider_split"): 4, ("search", "provider_split"): 2,
                                           ("unallocated", "unallocated_capacity"): 2}
    assert con.execute("select count(*) from findings_month where finding = 'provider_split_differs'").fetchone() == (0,)
    # the node's estimated energy and CO2e go through the same split
    for meter in ("it_energy_kwh", "co2e_kg"):
        energy = allocated(con, meter)
        whole = sum(energy.values())
        assert whole > 0 and set(energy) == set(cost)
        assert abs(energy["research", "provider_split"] / whole - Decimal("0.5")) < Decimal("0.001")
        assert abs(energy["unallocated", "unallocated_capacity"] / whole - Decimal("0.25")) < Decimal("0.001")


def node_hour(gpus: dict[str | None, int]) -> list[GpuHour]:
    """The node's 8 GPUs in the fixture's hour, each busy with one namespace (None = idle)."""
    names = [ns for ns, n in gpus.items() for _ in range(n)]
    return [GpuHour("gpu-node-1", f"GPU-{i}", 0, 0.4, 0.9, {ns: 4}, instance_id=NODE) for i, ns in enumerate(names)]


def test_telemetry_splits_a_covered_node_and_a_differing_aws_split_is_a_finding(tmp_path):
    ingest_json(tmp_path / "wh.duckdb", LEGACY)
    # telemetry: research busy on 2 GPUs, search on 6; AWS: research 2/3 of the pods' split cost
    con = build(tmp_path, [], node_hour({"research": 2, "search": 6}), TEAMS)
    cost = allocated(con)
    assert sum(cost.values()) == PARENT_USD
    assert {r for _, r in cost} == {"telemetry_split"}
    assert abs(cost["research", "telemetry_split"] - Decimal("8.208")) < CENT     # 2 of 8 busy GPU-hours
    found = con.execute("""select team, round(value, 4), round(cost_usd, 2), assumption_ids from findings_month
                           where finding = 'provider_split_differs' order by team""").fetchall()
    assert found == [("research", -0.4167, 10.26, ["assumptions:findings_provider_split_tolerance"]),
                     ("search", 0.4167, 10.26, ["assumptions:findings_provider_split_tolerance"])]


def test_no_finding_where_telemetry_agrees_with_aws(tmp_path):
    ingest_json(tmp_path / "wh.duckdb", CUR2)
    con = build(tmp_path, [], node_hour({"research": 4, "search": 2, None: 2}), TEAMS)
    assert sum(allocated(con).values()) == PARENT_USD
    assert con.execute("select count(*) from findings_month where finding = 'provider_split_differs'").fetchone() == (0,)


pod = st.tuples(st.sampled_from(["research", "search", "ops", "unmapped"]), st.integers(0, 10**6), st.integers(0, 10**5))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pods=st.lists(pod, min_size=1, max_size=5))
def test_provider_split_conserves_the_parent_whatever_the_pods(tmp_path_factory, pods):
    """Team totals add up to the parent's cost exactly, and each team's share is its split cost's
    (within a cent a line), its unused cost the unallocated capacity's."""
    tmp = tmp_path_factory.mktemp("split")
    cents = [(ns, Decimal(s) / 100, Decimal(u) / 100) for ns, s, u in pods]
    parent = sum(s + u for _, s, u in cents)
    with LEGACY.open(newline="") as f:
        template = list(csv.DictReader(f))
    rows = [{**template[0], "lineItem/UnblendedCost": str(parent)}]
    for i, (ns, s, u) in enumerate(cents):
        arn = f"arn:aws:eks:us-east-1:123412341234:pod/gpu-cluster/{ns}/pod-{i}/uid-{i}"
        rows.append({**template[1], "identity/LineItemId": f"li-{i}", "lineItem/ResourceId": arn,
                     "resourceTags/aws:eks:namespace": ns, "splitLineItem/SplitCost": str(s), "splitLineItem/UnusedCost": str(u)})
    path = tmp / "cur.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, list(template[0]))
        w.writeheader()
        w.writerows(rows)
    ingest_json(tmp / "wh.duckdb", path)
    cost = allocated(build(tmp, [], [], Config(namespace_teams={"research": "research", "search": "search", "ops": "ops"})))
    assert sum(cost.values()) == parent
    split = sum(s for _, s, _ in cents)
    if parent == 0 or split == 0:
        return
    want: dict[tuple[str, str], Decimal] = {}
    for ns, s, u in cents:
        team = "unallocated" if ns == "unmapped" else ns
        want[team, "provider_split"] = want.get((team, "provider_split"), Decimal(0)) + s
        want["unallocated", "unallocated_capacity"] = want.get(("unallocated", "unallocated_capacity"), Decimal(0)) + u
    for key, amount in want.items():
        assert abs(cost.get(key, Decimal(0)) - amount) <= CENT * len(want), key
