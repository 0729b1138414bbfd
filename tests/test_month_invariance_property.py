"""Month invariance as a property (issue 14): for generated months A and B, every mart's rows for
month A are the same whether B was ingested before A, after it, or not at all.
(Each month may also bring an hourly grid series and a REC under an id both months use, issue 21.)

Each generated month has FOCUS billing in one or two currencies (GPU nodes tagged, untagged or
shared between teams, support and credits), sometimes delivered twice (a restatement: the later
delivery replaces the earlier), and dcgm-exporter scrapes of the nodes' GPUs with random gaps and
counter resets, two namespaces of different teams sharing a node, and a work log of jobs on them
(job_month). Nodes and instance ids are the same in both months; the boards differ, as a cloud
instance restarted in another month lands on other physical GPUs (a board seen in both months
would let B's readings tell A's energy, which is new knowledge about A, not a change of it)."""
from __future__ import annotations

import csv
import json
import math
import shutil
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.config import load_config
from pipelines.stages import MARTS, run_stages
from pipelines.warehouse import connect
from tests.conftest import ingest_json
from tests.telemetry_fixtures import Trace, write_prom_text

A, BEFORE, AFTER = "2026-10", "2026-09", "2026-11"
INTERVAL = 60
TEAMS = ("research", "search", "vision")
NODES = ("node-a", "node-b")
FOCUS = ["BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodStart",
         "BillingPeriodEnd", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodStart", "ChargePeriodEnd",
         "ConsumedQuantity", "ConsumedUnit", "EffectiveCost", "ListCost", "ProviderName", "RegionId", "ResourceId",
         "ServiceName", "ServiceCategory", "ServiceSubcategory", "InvoiceId", "PricingCurrency", "BillingAccountType", "Tags"]
# Columns that compare a month with the one before it (they must see B when B is the month before).
PREVIOUS_MONTH = {"billed_cost_prev_month", "billed_cost_change", "effective_cost_change", "facility_energy_kwh_change"}
WAREHOUSE_KEYS = {"file_id"}   # warehouse-internal ids: they follow the load order, not the data
CONFIG = """[teams]
tag_keys = ["team"]
[teams.namespaces]
"llm" = "research"
"embed" = "search"
[hosts]
"node-a" = "i-node-a"
"node-b" = "i-node-b"
[telemetry]
interval_s = 60
default_zone = "aws:us-east-1"
"""

node_usage = st.fixed_dictionaries({
    "node": st.sampled_from(NODES), "team": st.sampled_from(TEAMS + ("",)), "start_day": st.integers(1, 20),
    "hours": st.integers(3, 8), "rate": st.decimals("0.5", "40", places=4),
})
gpu_trace = st.fixed_dictionaries({
    "node": st.sampled_from(NODES), "namespace": st.sampled_from(["llm", "embed", ""]), "start_day": st.integers(1, 20),
    "hours": st.integers(2, 6), "watts": st.integers(80, 380),
    "gap": st.one_of(st.none(), st.tuples(st.floats(0.1, 0.8), st.integers(5, 180))),
    "reset": st.one_of(st.none(), st.floats(0.05, 0.95)),
})
month_spec = st.fixed_dictionaries({
    "usage": st.lists(node_usage, min_size=1, max_size=3),
    # the month's hourly grid series (first days, some hours missing) and a REC for the month under
    # an id the other month reuses for its own period (issue 21)
    "grid_hours": st.integers(0, 21 * 24), "grid_gap": st.integers(0, 24),
    "rec_mwh": st.floats(0.0005, 0.05),
    "support_usd": st.decimals("0", "50", places=2),
    "credit_usd": st.decimals("0", "20", places=2),
    "eur_usd": st.one_of(st.none(), st.decimals("1", "30", places=2)),
    "restated": st.booleans(),
    "gpus": st.lists(gpu_trace, min_size=1, max_size=3),
})


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def month_start(month: str) -> datetime:
    return datetime.strptime(month, "%Y-%m")


def focus_rows(month: str, spec: dict, version: int) -> list[dict]:
    m0 = month_start(month)
    m1 = (m0 + timedelta(days=32)).replace(day=1)
    base = {c: "" for c in FOCUS} | {"BillingAccountId": "111122223333", "BillingAccountName": "Acme",
                                     "BillingCurrency": "USD", "PricingCurrency": "USD", "BillingPeriodStart": iso(m0),
                                     "BillingPeriodEnd": iso(m1), "ProviderName": "AWS", "RegionId": "us-east-1",
                                     "InvoiceId": f"INV-{month}", "BillingAccountType": "Billing Account"}
    bump = Decimal(version) / 100   # a restated delivery corrects every amount a little
    rows = []
    for u in spec["usage"]:
        for h in range(u["hours"]):
            t = m0 + timedelta(days=u["start_day"] - 1, hours=h)
            cost = str(u["rate"] + bump)
            rows.append(base | {"ChargeCategory": "Usage", "ChargePeriodStart": iso(t), "ChargePeriodEnd": iso(t + timedelta(hours=1)),
                                "ChargeDescription": "p4d.24xlarge instance hour", "ConsumedQuantity": "1", "ConsumedUnit": "Hours",
                                "BilledCost": cost, "EffectiveCost": cost, "ListCost": cost, "ResourceId": f"i-{u['node']}",
                                "ServiceName": "Amazon Elastic Compute Cloud", "ServiceCategory": "Compute",
                                "ServiceSubcategory": "Virtual Machines",
                                "Tags": json.dumps({"team": u["team"]} if u["team"] else {})})
    for category, usd, service in (("Usage", spec["support_usd"], "AWS Support"), ("Credit", -spec["credit_usd"], "Amazon Elastic Compute Cloud")):
        if usd:
            rows.append(base | {"ChargeCategory": category, "ChargePeriodStart": iso(m0), "ChargePeriodEnd": iso(m1),
                                "ChargeDescription": service, "BilledCost": str(usd), "EffectiveCost": str(usd),
                                "ListCost": str(usd), "ServiceName": service, "ServiceCategory": "Management and Governance",
                                "Tags": "{}"})
    return rows


def eur_rows(month: str, usd: Decimal) -> list[dict]:
    m0 = month_start(month)
    m1 = (m0 + timedelta(days=32)).replace(day=1)
    cost = str(usd)
    return [{c: "" for c in FOCUS} | {
        "BillingAccountId": "999988887777", "BillingAccountName": "Acme EU", "BillingCurrency": "EUR", "PricingCurrency": "EUR",
        "BillingPeriodStart": iso(m0), "BillingPeriodEnd": iso(m1), "ProviderName": "AWS", "RegionId": "eu-west-1",
        "InvoiceId": f"INV-EU-{month}", "BillingAccountType": "Billing Account", "ChargeCategory": "Usage",
        "ChargePeriodStart": iso(m0), "ChargePeriodEnd": iso(m1), "ChargeDescription": "storage", "BilledCost": cost,
        "EffectiveCost": cost, "ListCost": cost, "ServiceName": "Amazon S3", "ServiceCategory": "Storage",
        "Tags": json.dumps({"team": "vision"})}]


def write_csv(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=FOCUS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


def traces(month: str, spec: dict) -> list[Trace]:
    out = []
    for i, g in enumerate(spec["gpus"]):
        n = g["hours"] * 3600 // INTERVAL
        drop = set()
        if g["gap"]:
            k0 = int(g["gap"][0] * n)
            drop = set(range(k0, min(n - 1, k0 + g["gap"][1])))
        resets = {max(1, int(g["reset"] * n))} if g["reset"] else set()
        ns = g["namespace"]
        pod = f',namespace="{ns}",pod="{ns}-0"' if ns else ',namespace="",pod=""'
        power = [g["watts"] + 10 * math.sin(k / 11) for k in range(n)]
        t = Trace(uuid=f"GPU-{month}-{i:04d}-0000-0000-000000000000", interval_s=INTERVAL, power_w=power, drop=drop,
                  resets_at=resets, start=month_start(month) + timedelta(days=g["start_day"] - 1, seconds=5),
                  extra_labels=pod)
        t.host = g["node"]
        out.append(t)
    return out


def write_work(path: Path, month: str, spec: dict) -> Path:
    """The month's work log: a job per namespaced trace over its hours, and a bare-metal job on
    node-a over most of the month (it claims idle time too)."""
    m0 = month_start(month)
    rows = ["job_id,workload,namespace,host,start_utc,end_utc,params,tokens,requests,precision"]
    for i, g in enumerate(spec["gpus"]):
        if g["namespace"]:
            t0 = m0 + timedelta(days=g["start_day"] - 1)
            rows.append(f"job-{i},training,{g['namespace']},,{iso(t0)},{iso(t0 + timedelta(hours=g['hours'] + 1))},1e6,1e6,,bf16")
    rows.append(f"bare,serving,,node-a,{iso(m0)},{iso(m0 + timedelta(days=25))},1e6,1e6,1e3,fp16")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def write_carbon(root: Path, month: str, spec: dict) -> list[Path]:
    """A plain operator series for us-east-1's grid, and the month's REC (instruments file)."""
    m0, files = month_start(month), []
    if spec["grid_hours"]:
        grid = root / month / "grid" / "pjm.csv"
        grid.parent.mkdir(parents=True, exist_ok=True)
        hours = [h for h in range(spec["grid_hours"]) if h % 24 != spec["grid_gap"]]
        grid.write_text("zone,hour_utc,gco2_per_kwh\n" + "".join(
            f"PJM,{iso(m0 + timedelta(hours=h))},{300 + 90 * math.sin(h / 5):.2f}\n" for h in hours), encoding="utf-8")
        files.append(grid)
    rec = root / month / "instruments" / "recs.csv"
    rec.parent.mkdir(parents=True, exist_ok=True)
    end = (m0 + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    rec.write_text("instrument_id,type,zone,period_start,period_end,mwh,g_per_kwh,source,year\n"
                   f"REC-7,rec,US,{m0:%Y-%m-%d},{end:%Y-%m-%d},{spec['rec_mwh']},0,M-RETS batch {month},{m0.year}\n",
                   encoding="utf-8")
    return [*files, rec]


def write_month(root: Path, month: str, spec: dict) -> list[list[Path]]:
    """The month's deliveries in load order: each inner list is one ingest run."""
    runs = [[write_csv(root / month / "v1" / "focus.csv", focus_rows(month, spec, 0)), *write_carbon(root, month, spec)]]
    if spec["eur_usd"] is not None:
        runs[0].append(write_csv(root / month / "v1-eu" / "focus-eu.csv", eur_rows(month, spec["eur_usd"])))
    if spec["restated"]:
        runs.append([write_csv(root / month / "v2" / "focus.csv", focus_rows(month, spec, 1))])
    for node in NODES:
        mine = [t for t in traces(month, spec) if t.host == node]
        if mine:
            (root / month / "dcgm").mkdir(parents=True, exist_ok=True)
            path = write_prom_text(root / month / "dcgm" / f"{node}.prom", mine)
            path.write_text(path.read_text().replace('Hostname="node-a"', f'Hostname="{node}"'))
            runs[0].append(path)
    runs[0].append(write_work(root / month / "work" / "work.csv", month, spec))
    return runs


def mart_rows(wh: Path, month: str) -> dict[str, list[tuple]]:
    con = connect(wh)
    run_stages(con, load_config(wh.parent / "meterbook.toml"))
    out = {"contract_findings": sorted(map(repr, con.execute("select * from contract_findings").fetchall()))}
    for table in MARTS:
        cols = [r[0] for r in con.execute(f"describe {table}").fetchall()]
        if "month" not in cols:
            continue
        keep = [c for c in cols if c not in PREVIOUS_MONTH | WAREHOUSE_KEYS]
        rows = con.execute(f"select {', '.join(keep)} from {table} where month = ?", [month]).fetchall()
        out[table] = sorted((tuple(_stable(v) for v in r) for r in rows), key=repr)   # nulls beside text
    con.close()
    return out


def _stable(v):
    """Doubles to ten significant digits: far below any figure shown, above summation noise."""
    if isinstance(v, float):
        return float(f"{v:.10g}")
    if isinstance(v, list):
        return tuple(_stable(x) for x in v)
    return repr({k: _stable(x) for k, x in v.items()}) if isinstance(v, dict) else v


def build(root: Path, runs: list[list[Path]], loaded: Path | None = None) -> Path:
    """A warehouse in root with the runs ingested in order, on top of a copy of `loaded` (a
    warehouse with earlier runs ingested and never built) when given."""
    root.mkdir(parents=True)
    (root / "meterbook.toml").write_text(CONFIG)
    wh = root / "wh.duckdb"
    if loaded is not None:
        shutil.copy(loaded, wh)
    for paths in runs:
        ingest_json(wh, *paths)
    return wh


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(a=month_spec, b=month_spec, b_month=st.sampled_from([BEFORE, AFTER]))
def test_month_a_is_the_same_whatever_else_is_loaded(tmp_path_factory, a, b, b_month):
    root = tmp_path_factory.mktemp("prop")
    a_runs, b_runs = write_month(root / "in", A, a), write_month(root / "in", b_month, b)
    a_loaded = build(root / "alone", a_runs)
    # month A's loads, never built: "B after A" goes on from a copy (the same files, ids and order)
    shutil.copy(a_loaded, root / "a_loaded.duckdb")
    alone = mart_rows(a_loaded, A)
    assert alone["team_month"], "month A allocates nothing: the generator is broken"
    assert alone["job_month"], "month A's work log priced nothing: the generator is broken"
    assert alone["contract_findings"] == []
    for name, runs, loaded in (("b_first", b_runs + a_runs, None), ("b_after", b_runs, root / "a_loaded.duckdb")):
        got = mart_rows(build(root / name, runs, loaded), A)
        for table in alone:
            assert got[table] == alone[table], f"{table} for {A} changed when {b_month} was loaded ({name})"
