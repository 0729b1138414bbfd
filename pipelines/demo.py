"""A deterministic demo month in the real input formats (FOCUS 1.2, legacy CUR, dcgm-exporter
text, CodeCarbon, disclosure YAML, a work log), driven by demo_fleet.toml and a fixed seed."""
from __future__ import annotations

import csv
import math
import random
import tomllib
import uuid
from datetime import datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from importlib.resources import files
from pathlib import Path
from typing import Any, Iterator, NamedTuple, TextIO

from core.months import month_bounds
from pipelines.demo_onprem import cluster_config, write_cluster_telemetry, write_sacct
from sources.focus import FOCUS_12
from sources.reference_data import assumption, read_rows

SEED = 20261022
CENT = Decimal("0.0000000001")   # 10 decimals, as cloud exports write costs
FOCUS_12_COLUMNS = [*sorted(FOCUS_12), "x_UsageType", "x_Operation"]   # the spec's columns, then AWS's x_ ones
CUR_COLUMNS = [
    "identity/LineItemId", "identity/TimeInterval", "bill/InvoiceId", "bill/BillingEntity", "bill/BillType",
    "bill/PayerAccountId", "bill/BillingPeriodStartDate", "bill/BillingPeriodEndDate", "lineItem/UsageAccountId",
    "lineItem/LineItemType", "lineItem/UsageStartDate", "lineItem/UsageEndDate", "lineItem/ProductCode",
    "lineItem/UsageType", "lineItem/Operation", "lineItem/AvailabilityZone", "lineItem/ResourceId",
    "lineItem/UsageAmount", "lineItem/CurrencyCode", "lineItem/UnblendedRate", "lineItem/UnblendedCost",
    "lineItem/LineItemDescription", "product/ProductName", "product/sku", "product/instanceType", "product/productFamily",
    "product/regionCode", "pricing/publicOnDemandCost", "pricing/publicOnDemandRate", "pricing/term", "pricing/unit",
    "savingsPlan/SavingsPlanARN", "savingsPlan/SavingsPlanRate", "savingsPlan/SavingsPlanEffectiveCost",
    "savingsPlan/TotalCommitmentToDate", "savingsPlan/UsedCommitment", "resourceTags/user:team",
    "resourceTags/user:project", "resourceTags/aws:eks:cluster-name", "resourceTags/aws:eks:namespace",
    "splitLineItem/ParentResourceId", "splitLineItem/SplitCost", "splitLineItem/UnusedCost", "splitLineItem/SplitUsage",
    "splitLineItem/SplitUsageRatio",
]
# AWS split cost allocation data: a pod's field in demo_fleet.toml and the usage-type name, per
# resource of assumptions.csv aws_split_weight_<resource>
SPLIT_RESOURCES = {"gpu": ("gpus", "GPU"), "vcpu": ("vcpus", "vCPU"), "memory_gb": ("memory_gb", "GB")}
REGION = "us-east-1"
TEAM_OF_NAMESPACE = {"llm-finetune": "research", "search-embed": "search", "llm-pretrain": "research",
                     "search-serving": "search", "notebooks": "platform", "model-serving-dev": "platform",
                     "analytics": "platform"}


def fleet() -> dict[str, Any]:
    return tomllib.loads((files("pipelines") / "demo_fleet.toml").read_text(encoding="utf-8"))


def iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def money(x: Decimal) -> str:
    return str(x.quantize(CENT, rounding=ROUND_HALF_EVEN))


def instance_hours(inst: dict[str, Any], m0: datetime, m1: datetime) -> Iterator[datetime]:
    t = m0 + timedelta(days=inst["start_day"] - 1)
    for h in range(inst["hours"]):
        ts = t + timedelta(hours=h)
        if ts < m1:
            yield ts


# ---- billing ---------------------------------------------------------------------------------

def focus_rows(f: dict[str, Any], m0: datetime, m1: datetime, account_id: str | None = None) -> list[dict[str, str]]:
    """The FOCUS export of one account (default: the first FOCUS one), in its billing currency."""
    acct = next(a for a in f["accounts"] if a["format"] == "focus-1.2" and account_id in (None, a["id"]))
    currency = acct.get("currency", "USD")
    base = {c: "" for c in FOCUS_12_COLUMNS}
    base.update(BillingAccountId=acct["id"], BillingAccountName=acct["name"], BillingAccountType="Billing Account",
                BillingCurrency=currency, BillingPeriodStart=iso(m0), BillingPeriodEnd=iso(m1),
                InvoiceIssuerName="Amazon Web Services, Inc.", ProviderName="AWS", PublisherName="Amazon Web Services, Inc.",
                PricingCurrency=currency, InvoiceId=f"INV-{m0:%Y%m}-{acct['id'][-4:]}", SubAccountId=acct["id"],
                SubAccountName=acct["name"], SubAccountType="Account", RegionId=acct.get("region", REGION),
                RegionName=acct.get("region_name", "US East (N. Virginia)"))
    rows = []
    for inst in (i for i in f["instances"] if i["account"] == acct["id"]):
        rate = Decimal(str(inst["rate_usd_per_h"]))
        tags = {"team": inst["team"]} if inst["team"] else {}
        hourly = inst["hours"] < 200   # long-running instances are billed in daily rows
        hours = list(instance_hours(inst, m0, m1))
        chunks = [[h] for h in hours] if hourly else [[h for h in hours if h.date() == d] for d in sorted({h.date() for h in hours})]
        for chunk in chunks:
            qty = Decimal(len(chunk))
            cost = rate * qty
            rows.append({**base, "ChargeCategory": "Usage", "ChargeFrequency": "Usage-Based",
                         "ChargePeriodStart": iso(chunk[0]), "ChargePeriodEnd": iso(chunk[-1] + timedelta(hours=1)),
                         "ChargeDescription": f"${rate} per On Demand Linux {inst['type']} Instance Hour",
                         "ServiceName": "Amazon Elastic Compute Cloud", "ServiceCategory": "Compute",
                         "ServiceSubcategory": "Virtual Machines", "ResourceId": inst["id"], "ResourceType": "Instance",
                         "AvailabilityZone": REGION + "a", "ConsumedQuantity": str(qty), "ConsumedUnit": "Hours",
                         "PricingQuantity": str(qty), "PricingUnit": "Hours", "PricingCategory": "Standard",
                         "ListUnitPrice": str(rate), "ContractedUnitPrice": str(rate), "BilledCost": money(cost),
                         "EffectiveCost": money(cost), "ListCost": money(cost), "ContractedCost": money(cost),
                         "PricingCurrencyEffectiveCost": money(cost), "PricingCurrencyListUnitPrice": str(rate),
                         "PricingCurrencyContractedUnitPrice": str(rate), "SkuId": f"SKU-{inst['type']}",
                         "x_UsageType": f"USE1-BoxUsage:{inst['type']}", "x_Operation": "RunInstances",
                         "Tags": _json(tags)})
    days = [m0 + timedelta(days=d) for d in range((m1 - m0).days)]
    for o in (o for o in f["other"] if o["account"] == acct["id"]):
        # total_usd, or total_eur for an account billed in EUR: the amount in its billing currency
        total, n = Decimal(str(o.get("total_usd", o.get("total_eur")))), len(days)
        daily = (total / n).quantize(CENT)
        for i, d in enumerate(days):
            cost = daily if i < n - 1 else total - daily * (n - 1)   # the last day takes the remainder: sums stay exact
            quantity = Decimal(str(o["quantity"])) / n if o["quantity"] else None
            rows.append({**base, "ChargeCategory": o["category"], "ChargeFrequency": "Usage-Based" if o["category"] == "Usage" else "Recurring",
                         "ChargePeriodStart": iso(d), "ChargePeriodEnd": iso(d + timedelta(days=1)),
                         "ChargeDescription": f"{o['service']} ({d:%Y-%m-%d})", "ServiceName": o["service"],
                         "ServiceCategory": o["service_category"], "ConsumedQuantity": f"{quantity:.6f}" if quantity else "",
                         "ConsumedUnit": o["unit"], "PricingUnit": o["unit"], "BilledCost": money(cost),
                         "EffectiveCost": money(cost), "ListCost": money(cost), "ContractedCost": money(cost),
                         "PricingCategory": "Standard" if o["category"] == "Usage" else "",
                         "SkuId": "" if o["category"] == "Tax" else "SKU-" + "".join(w[0] for w in o["service"].split()).upper(),
                         "Tags": _json({"team": o["team"]} if o["team"] else {})})
    return rows


def _json(d: dict[str, str]) -> str:
    import json
    return json.dumps(d, separators=(",", ":"))


def fixed(x: Decimal) -> str:
    """An amount as money() rounds it, in fixed notation (0.0000000000, not 0E-10)."""
    return format(x.quantize(CENT, rounding=ROUND_HALF_EVEN), "f")


def split_rows(inst: dict[str, Any], rate: Decimal, hour: datetime) -> list[dict[str, str]]:
    """One hour of an EKS node's pods in split cost allocation data: per pod and resource, its
    split cost by AWS's weights, and its part of the unused cost in proportion to its usage."""
    it = next(r for r in read_rows("instance_types") if r["instance_type"] == inst["type"])
    capacity = {"gpu": Decimal(it["gpu_count"]), "vcpu": Decimal(it["vcpu"]), "memory_gb": Decimal(it["memory_gib"])}
    weight = {k: Decimal(str(assumption(f"aws_split_weight_{k}")["value"])) for k in capacity}
    unit = rate / sum(weight[k] * capacity[k] for k in capacity)
    rows = []
    for k, (field, label) in SPLIT_RESOURCES.items():
        used = sum(Decimal(str(p[field])) for p in inst["split_pods"])
        for p in inst["split_pods"]:
            use = Decimal(str(p[field]))
            arn = f"arn:aws:eks:{REGION}:{inst['account']}:pod/{inst['cluster']}/{p['namespace']}/{p['pod']}/{inst['id']}"
            rows.append({
                "identity/LineItemId": uuid.uuid5(uuid.NAMESPACE_URL, f"{arn}/{label}/{iso(hour)}").hex,
                "lineItem/LineItemType": "Usage", "lineItem/ProductCode": "AmazonEKS", "lineItem/ResourceId": arn,
                "lineItem/UsageType": f"USE1-EKS-EC2-{label}-Hours", "lineItem/UsageAmount": str(use),
                "lineItem/UnblendedCost": "0", "pricing/unit": f"{label}-Hours",
                "lineItem/LineItemDescription": f"{label} split of {inst['id']}",
                "product/ProductName": "Amazon Elastic Kubernetes Service", "resourceTags/user:team": p["team"],
                "resourceTags/aws:eks:cluster-name": inst["cluster"], "resourceTags/aws:eks:namespace": p["namespace"],
                "splitLineItem/ParentResourceId": inst["id"], "splitLineItem/SplitCost": fixed(use * weight[k] * unit),
                "splitLineItem/UnusedCost": fixed((capacity[k] - used) * weight[k] * unit * use / used),
                "splitLineItem/SplitUsage": str(use), "splitLineItem/SplitUsageRatio": str(use / capacity[k])})
    return rows


def cur_rows(f: dict[str, Any], m0: datetime, m1: datetime) -> list[dict[str, str]]:
    acct = next(a for a in f["accounts"] if a["format"] == "aws-cur")
    sp = f["savings_plan"]
    rng = random.Random(SEED)
    base = {c: "" for c in CUR_COLUMNS}
    base.update({"bill/InvoiceId": f"EUINUS{m0:%y%m}0001", "bill/BillingEntity": "AWS", "bill/BillType": "Anniversary",
                 "bill/PayerAccountId": acct["id"], "bill/BillingPeriodStartDate": iso(m0).replace("Z", ".000Z"),
                 "bill/BillingPeriodEndDate": iso(m1).replace("Z", ".000Z"), "lineItem/UsageAccountId": acct["id"],
                 "lineItem/CurrencyCode": "USD", "product/regionCode": REGION})
    rows: list[dict[str, str]] = []

    def add(**kw: str) -> None:
        row = {**base, **kw}
        row["identity/LineItemId"] = "%032x" % rng.getrandbits(128)
        rows.append(row)

    used = Decimal(0)
    for inst in (i for i in f["instances"] if i["account"] == acct["id"]):
        rate = Decimal(str(inst["rate_usd_per_h"]))
        sp_rate = inst.get("savings_plan_rate_usd_per_h")
        tags = {"resourceTags/user:team": inst["team"], "resourceTags/user:project": "imagenet" if inst["team"] else ""}
        common = {"lineItem/ProductCode": "AmazonEC2", "lineItem/UsageType": f"USE1-BoxUsage:{inst['type']}",
                  "lineItem/Operation": "RunInstances", "lineItem/AvailabilityZone": REGION + "b",
                  "lineItem/ResourceId": inst["id"], "lineItem/UsageAmount": "1.0", "pricing/unit": "Hrs",
                  "product/ProductName": "Amazon Elastic Compute Cloud", "product/instanceType": inst["type"],
                  "product/sku": f"SKU-{inst['type']}",
                  "product/productFamily": "Compute Instance", "pricing/publicOnDemandCost": money(rate),
                  "pricing/publicOnDemandRate": str(rate), **tags}
        for h in instance_hours(inst, m0, m1):
            span = {"identity/TimeInterval": f"{iso(h)}/{iso(h + timedelta(hours=1))}",
                    "lineItem/UsageStartDate": iso(h), "lineItem/UsageEndDate": iso(h + timedelta(hours=1))}
            if sp_rate:
                spr = Decimal(str(sp_rate))
                used += spr
                add(**common, **span, **{"lineItem/LineItemType": "SavingsPlanCoveredUsage", "lineItem/UnblendedRate": str(rate),
                    "lineItem/UnblendedCost": money(rate), "pricing/term": "Savings Plan",
                    "lineItem/LineItemDescription": f"USD {spr} per hour for {inst['type']} under Compute Savings Plan",
                    "savingsPlan/SavingsPlanARN": sp["arn"], "savingsPlan/SavingsPlanRate": str(spr),
                    "savingsPlan/SavingsPlanEffectiveCost": money(spr)})
                add(**common, **span, **{"lineItem/LineItemType": "SavingsPlanNegation", "lineItem/UnblendedRate": str(-rate),
                    "lineItem/UnblendedCost": money(-rate), "pricing/term": "Savings Plan",
                    "lineItem/LineItemDescription": f"SavingsPlanCoveredUsage negation for {inst['type']}",
                    "savingsPlan/SavingsPlanARN": sp["arn"]})
            else:
                add(**common, **span, **{"lineItem/LineItemType": "Usage", "lineItem/UnblendedRate": str(rate),
                    "lineItem/UnblendedCost": money(rate), "pricing/term": "OnDemand",
                    "lineItem/LineItemDescription": f"${rate} per On Demand Linux {inst['type']} Instance Hour"})
            # the node's pods re-describe its cost (their ids from their content: the seeded ids
            # of the other lines stay as they were)
            rows.extend({**base, **span, **r} for r in (split_rows(inst, rate, h) if "split_pods" in inst else []))
    hours = Decimal((m1 - m0).days * 24)
    commitment = Decimal(str(sp["commitment_usd_per_h"])) * hours
    add(**{"lineItem/LineItemType": "SavingsPlanRecurringFee", "identity/TimeInterval": f"{iso(m0)}/{iso(m1)}",
           "lineItem/UsageStartDate": iso(m0), "lineItem/UsageEndDate": iso(m1), "lineItem/ProductCode": "ComputeSavingsPlans",
           "lineItem/UsageType": "ComputeSP:1yrNoUpfront", "lineItem/UsageAmount": str(hours), "pricing/unit": "Hrs",
           "lineItem/UnblendedCost": money(commitment), "lineItem/LineItemDescription": "1 year No Upfront Compute Savings Plan",
           "savingsPlan/SavingsPlanARN": sp["arn"], "savingsPlan/TotalCommitmentToDate": money(commitment),
           "savingsPlan/UsedCommitment": money(used), "product/ProductName": "Savings Plans for AWS Compute usage",
           "product/sku": "SKU-COMPUTESP-1YR"})
    cr = f["credit"]
    add(**{"lineItem/LineItemType": "Credit", "identity/TimeInterval": f"{iso(m0)}/{iso(m1)}",
           "lineItem/UsageStartDate": iso(m0), "lineItem/UsageEndDate": iso(m1), "lineItem/ProductCode": "AmazonEC2",
           "lineItem/UnblendedCost": money(Decimal(str(cr["amount_usd"]))), "lineItem/LineItemDescription": cr["description"],
           "product/ProductName": "Amazon Elastic Compute Cloud"})
    taxable = sum(Decimal(r["lineItem/UnblendedCost"]) for r in rows if r["lineItem/LineItemType"] != "Credit")
    add(**{"lineItem/LineItemType": "Tax", "identity/TimeInterval": f"{iso(m0)}/{iso(m1)}",
           "lineItem/UsageStartDate": iso(m0), "lineItem/UsageEndDate": iso(m1), "lineItem/ProductCode": "AmazonEC2",
           "lineItem/UnblendedCost": money((taxable * Decimal(str(f["cur_tax"]["rate"]))).quantize(Decimal("0.01"))),
           "lineItem/LineItemDescription": "Tax for product code AmazonEC2", "product/ProductName": "Amazon Elastic Compute Cloud"})
    return rows


INVOICE_COLUMNS = ["invoice_id", "issuer", "billing_account_id", "period", "amount", "currency"]


def invoice_rows(month: str, billing: list[tuple[list[dict[str, str]], str, str, str]],
                 currency: dict[str, str] | None = None) -> list[dict[str, str]]:
    """The invoices behind the month's exports, as a finance team would type them from the PDFs:
    one per (rows, invoice id column, account column, cost column), the total rounded to the cent,
    in its account's currency (`currency`: account id -> code; USD where absent)."""
    out = []
    for rows, id_col, account_col, cost_col in billing:
        total = sum((Decimal(r[cost_col]) for r in rows), Decimal(0)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
        out.append({"invoice_id": rows[0][id_col], "issuer": "Amazon Web Services, Inc.", "billing_account_id": rows[0][account_col],
                    "period": month, "amount": str(total), "currency": (currency or {}).get(rows[0][account_col], "USD")})
    return out


RATE_COLUMNS = ["date", "from", "to", "rate", "source"]


def rate_rows(r: dict[str, Any], m0: datetime, m1: datetime) -> list[dict[str, str]]:
    """A month of working-day EUR -> USD rates (none at weekends, as the ECB publishes), a slow
    drift from `start` by `step` a day: synthetic, and labelled so."""
    days = [m0 + timedelta(days=d) for d in range((m1 - m0).days)]
    return [{"date": f"{d:%Y-%m-%d}", "from": "EUR", "to": "USD", "rate": str(Decimal(str(r["start"])) + Decimal(str(r["step"])) * i),
             "source": r["source"]} for i, d in enumerate(days) if d.weekday() < 5]


def write_csv(path: Path, columns: list[str], rows: list[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


# ---- telemetry -------------------------------------------------------------------------------

METRICS = [
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
]


def gpu_uuid(host: str, idx: int, started: datetime) -> str:
    """A stopped and restarted cloud instance keeps its id and host name but lands on other
    physical GPUs: each start of a demo instance (once a month) gets boards of its own."""
    return "GPU-" + str(uuid.UUID(int=random.Random(f"{host}/{idx}/{started:%Y-%m-%dT%H}").getrandbits(128)))


def telemetry_files(inst: dict[str, Any], m0: datetime, m1: datetime, out: Path, interval_s: int,
                    gpus: int | None = None) -> list[Path]:
    """One file per host and UTC day: concatenated scrapes with per-sample timestamps (ms)."""
    rng = random.Random(f"{SEED}/{inst['host']}")
    n_gpus = gpus or inst["gpus"]
    work = {g: w for w in inst.get("workloads", []) for g in w["gpus"]}
    counters = [rng.randrange(10**9, 10**11) for _ in range(n_gpus)]   # mJ since the driver loaded
    reset = inst.get("counter_reset")
    start = m0 + timedelta(days=inst["start_day"] - 1)
    labels = []
    for g in range(n_gpus):
        w = work.get(g % inst["gpus"]) if gpus else work.get(g)
        pod = f'container="main",namespace="{w["namespace"]}",pod="{w["pod"]}"' if w else 'container="",namespace="",pod=""'
        labels.append(f'gpu="{g}",UUID="{gpu_uuid(inst["host"], g, start)}",pci_bus_id="00000000:{16 + g:02X}:00.0",'
                      f'device="nvidia{g}",modelName="{inst["gpu_name"]}",Hostname="{inst["host"]}",{pod}')
    paths: list[Path] = []
    fh: TextIO | None = None
    day = None
    end = min(start + timedelta(hours=inst["hours"] - inst.get("telemetry_lost_hours", 0)), m1)
    steps = int((end - start).total_seconds() // interval_s)
    for k in range(steps):
        t = start + timedelta(seconds=k * interval_s)
        if t.date() != day:
            if fh:
                fh.close()
            day = t.date()
            p = out / inst["host"] / f"{inst['host']}_{day:%Y-%m-%d}.prom"
            p.parent.mkdir(parents=True, exist_ok=True)
            fh = open(p, "w", encoding="utf-8")
            paths.append(p)
        ms = int(t.timestamp() * 1000) if t.tzinfo else int((t - datetime(1970, 1, 1)).total_seconds() * 1000)
        values = []
        for g in range(n_gpus):
            w = work.get(g % inst["gpus"]) if gpus else work.get(g)
            util = min(1.0, max(0.0, rng.gauss(w["util"], 0.04))) if w else 0.0
            power = inst["idle_w"] + util * (inst["max_w"] - inst["idle_w"]) + rng.gauss(0, 2.0)
            if reset and g == reset["gpu"] and k * interval_s == reset["hour"] * 3600 + 20 * 60:
                counters[g] = 0
            counters[g] += int(round(power * interval_s * 1000))
            tensor = util * 0.6 if w else 0.0
            values.append((counters[g], f"{power:.3f}", str(int(round(util * 100))), f"{tensor:.6f}"))
        lines = []
        for m, (name, typ, help_) in enumerate(METRICS):
            lines.append(f"# HELP {name} {help_}\n# TYPE {name} {typ}\n")
            lines.extend(f"{name}{{{labels[g]}}} {values[g][m]} {ms}\n" for g in range(n_gpus))
        assert fh is not None   # opened at the first step: day starts as None
        fh.write("".join(lines))
    if fh:
        fh.close()
    return paths


# ---- shared GPUs: MIG instances, time-slicing, kube-state-metrics requests ------------------

KSM_REQUESTS_HELP = ("# HELP kube_pod_container_resource_requests The number of requested request resource by a container. "
                     "It is recommended to use the kube_pod_resource_requests metric exposed by kube-scheduler instead, "
                     "as it is more precise.\n# TYPE kube_pod_container_resource_requests gauge\n")
SHARED_HEADERS = [f"# HELP {name} {help_}\n# TYPE {name} gauge\n" for name, help_ in (
    ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active."))]


def ksm_resource(name: str) -> str:
    """A Kubernetes resource name as kube-state-metrics writes it in the resource label."""
    return name.replace(".", "_").replace("/", "_").replace("-", "_")


class SharedPart(NamedTuple):
    labels: str        # the workload's labels on its dcgm-exporter series
    util: float        # its mean GR_ENGINE_ACTIVE
    weight: float      # its part of the GPU's power when busy (a MIG instance's slices of the GPU)
    namespace: str
    pod: str
    resource: str      # the GPU resource it requests, and how many
    amount: int


def shared_gpu_parts(inst: dict[str, Any]) -> list[SharedPart]:
    if inst["sharing"] == "mig":
        return [SharedPart(f'GPU_I_PROFILE="{m["profile"]}",GPU_I_ID="{m["id"]}",container="main",namespace="{m["namespace"]}",'
                           f'pod="{m["pod"]}"', m["util"], m["slices"] / inst["mig_slices"], m["namespace"], m["pod"],
                           f'nvidia.com/mig-{m["profile"]}', 1) for m in inst["mig_instances"]]
    return [SharedPart(f'container="main",namespace="{p["namespace"]}",pod="{p["pod"]}",vgpu="{k}"', p["util"],
                       1.0, p["namespace"], p["pod"], "nvidia.com/gpu", p["replicas"]) for k, p in enumerate(inst["sliced_pods"])]


def shared_gpu_files(inst: dict[str, Any], m0: datetime, m1: datetime, out: Path, interval_s: int) -> list[Path]:
    """A node whose one GPU is shared, its run in one file of scrapes as dcgm-exporter writes them
    (one file, not one a day: the chargeback lists every file it read): a MIG GPU's power once
    for the device and GR_ENGINE_ACTIVE per GPU instance (GPU_I_ID, GPU_I_PROFILE); a
    time-sliced GPU's series once per pod (--kubernetes-virtual-gpus, the vgpu label). Beside
    them, the pods' GPU requests as kube-state-metrics exposes them."""
    rng = random.Random(f"{SEED}/{inst['host']}")
    start = m0 + timedelta(days=inst["start_day"] - 1)
    device = (f'gpu="0",UUID="{gpu_uuid(inst["host"], 0, start)}",pci_bus_id="00000000:10:1C.0",device="nvidia0",'
              f'modelName="{inst["gpu_name"]}",Hostname="{inst["host"]}"')
    parts = shared_gpu_parts(inst)
    mig = inst["sharing"] == "mig"
    end = min(start + timedelta(hours=inst["hours"]), m1)
    lines: list[str] = []
    requests: list[str] = []
    for k in range(int((end - start).total_seconds() // interval_s)):
        t = start + timedelta(seconds=k * interval_s)
        ms = int(t.timestamp() * 1000) if t.tzinfo else int((t - datetime(1970, 1, 1)).total_seconds() * 1000)
        active = [min(1.0, max(0.0, rng.gauss(p.util, 0.04))) for p in parts]
        busy = sum(a * p.weight for a, p in zip(active, parts)) if mig else max(active)
        power = f"{inst['idle_w'] + busy * (inst['max_w'] - inst['idle_w']) + rng.gauss(0, 1.0):.3f}"
        lines.append(SHARED_HEADERS[0])
        lines.extend([f"DCGM_FI_DEV_POWER_USAGE{{{device}}} {power} {ms}\n"] if mig else
                     [f"DCGM_FI_DEV_POWER_USAGE{{{device},{p.labels}}} {power} {ms}\n" for p in parts])
        lines.append(SHARED_HEADERS[1])
        lines.extend(f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{device},{p.labels}}} {a:.6f} {ms}\n" for p, a in zip(parts, active))
        requests.extend(f'kube_pod_container_resource_requests{{namespace="{p.namespace}",pod="{p.pod}",'
                        f'uid="{uuid.uuid5(uuid.NAMESPACE_URL, p.namespace + "/" + p.pod)}",container="main",node="{inst["host"]}",'
                        f'resource="{ksm_resource(p.resource)}",unit="integer"}} {p.amount} {ms}\n' for p in parts)
    path = out / "dcgm" / inst["host"] / f"{inst['host']}_{start:%Y-%m-%d}_{inst['hours']}h.prom"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    ksm = out / "dcgm" / "kube-state-metrics" / f"requests_{inst['host']}.prom"
    ksm.parent.mkdir(parents=True, exist_ok=True)
    ksm.write_text(KSM_REQUESTS_HELP + "".join(requests), encoding="utf-8")
    return [path, ksm]


# ---- runs, disclosures, config ---------------------------------------------------------------

CODECARBON_COLUMNS = [
    "timestamp", "project_name", "run_id", "experiment_id", "duration", "emissions", "emissions_rate", "cpu_power",
    "gpu_power", "ram_power", "cpu_energy", "gpu_energy", "ram_energy", "energy_consumed", "water_consumed",
    "country_name", "country_iso_code", "region", "cloud_provider", "cloud_region", "os", "python_version",
    "codecarbon_version", "cpu_count", "cpu_model", "gpu_count", "gpu_model", "longitude", "latitude",
    "ram_total_size", "tracking_mode", "cpu_utilization_percent", "gpu_utilization_percent",
    "ram_utilization_percent", "ram_used_gb", "on_cloud", "pue", "wue",
]


def codecarbon_rows(f: dict[str, Any], m0: datetime) -> list[dict[str, str]]:
    """A job family at several GPU counts: time falls with GPUs, less than linearly. Planted as
    Amdahl plus communication, T(K) = T1 (s + (1 - s) / K + c (K - 1)), so the scaling finding
    can be checked against the s and c written in demo_fleet.toml."""
    rng = random.Random(SEED + 1)
    rows = []
    for spec in f["runs"]:
        for i, k in enumerate(spec["gpu_counts"]):
            s, c = spec["serial_fraction"], spec["comm_fraction_per_gpu"]
            duration = spec["base_duration_s"] * (s + (1 - s) / k + c * (k - 1))
            gpu_w, cpu_w, ram_w = spec["gpu_w"] * k, spec["cpu_w"], spec["ram_w"]
            gpu_kwh, cpu_kwh, ram_kwh = (x * duration / 3.6e6 for x in (gpu_w, cpu_w, ram_w))
            energy = gpu_kwh + cpu_kwh + ram_kwh
            emissions = energy * spec["codecarbon_intensity_kg_per_kwh"]
            end = m0 + timedelta(days=8 + i, hours=9) + timedelta(seconds=duration)
            rows.append({
                "timestamp": end.strftime("%Y-%m-%dT%H:%M:%S"), "project_name": spec["project"],
                "run_id": str(uuid.UUID(int=rng.getrandbits(128))), "experiment_id": "5b0fa12a-3dd7-45bb-9766-cc326314d9f1",
                "duration": f"{duration:.6f}", "emissions": f"{emissions:.9f}", "emissions_rate": f"{emissions / duration:.12f}",
                "cpu_power": f"{cpu_w:.3f}", "gpu_power": f"{gpu_w:.3f}", "ram_power": f"{ram_w:.3f}",
                "cpu_energy": f"{cpu_kwh:.9f}", "gpu_energy": f"{gpu_kwh:.9f}", "ram_energy": f"{ram_kwh:.9f}",
                "energy_consumed": f"{energy:.9f}", "water_consumed": "0.0", "country_name": "United States",
                "country_iso_code": spec["country_iso"], "region": spec["region"], "cloud_provider": "aws",
                "cloud_region": REGION, "os": "Linux-6.8.0-x86_64-with-glibc2.35", "python_version": "3.11.7",
                "codecarbon_version": "3.2.1", "cpu_count": "96", "cpu_model": "Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz",
                "gpu_count": str(k), "gpu_model": f"{k} x {spec['gpu_name']}", "longitude": "", "latitude": "",
                "ram_total_size": "1152.0", "tracking_mode": "machine", "cpu_utilization_percent": "12.5",
                "gpu_utilization_percent": "88.0", "ram_utilization_percent": "21.0", "ram_used_gb": "242.0",
                "on_cloud": "Y", "pue": "1.0", "wue": "0.0"})
    return rows


WORK_COLUMNS = ["job_id", "workload", "namespace", "pod", "host", "gpu_uuids", "start_utc", "end_utc", "params",
                "active_params", "tokens", "samples", "requests", "precision", "tokens_per_s"]


def work_rows(f: dict[str, Any], m0: datetime, m1: datetime) -> list[dict[str, str]]:
    """The work log: one row per job of demo_fleet.toml, its window its instance's running time."""
    instances = {i["id"]: i for i in f["instances"]}
    rows = []
    for w in f["work"]:
        hours = list(instance_hours(instances[w["instance"]], m0, m1))
        rows.append({"job_id": w["job_id"], "workload": w["workload"], "namespace": w["namespace"], "pod": w["pod"],
                     "start_utc": iso(hours[0]), "end_utc": iso(hours[-1] + timedelta(hours=1)),
                     **{k: (f"{w[k]:g}" if isinstance(w[k], float) else str(w[k])) for k in
                        ("params", "active_params", "tokens", "samples", "requests", "precision", "tokens_per_s") if k in w}})
    return rows


DISCLOSURE = """\
# Demo disclosure: a model trained on the demo platform, published with partial figures.
model: Acme-Embed-1B
source: "Acme AI model card, section Environmental impact (demo)"
params: 1.1e9
tokens: 5.0e10
accelerator: NVIDIA H100 80GB HBM3
accelerator_count: 8
accelerator_hours: 192
power_basis: measured
location: aws:us-east-1
co2e_location_t: null
"""


# How the demo shares what no team owns (meterbook.toml [allocation]); the supplier factor is a
# demo figure (as if from the utility's fuel-mix disclosure), not a published one.
ALLOCATION_TEXT = """\
[allocation]                      # proportional | even | weights | unallocated
idle = "proportional"             # idle GPU time, over the teams that used the node
untagged = "unallocated"          # untagged resources stay visible as unallocated
shared_services = "proportional"  # support, tax, data transfer
commitment = "proportional"       # savings plan fees
credits = "proportional"          # credits no charge can be found for

[[carbon.supplier_factors]]       # market-based Scope 2, after the instruments in instruments/
zone = "owned:{cluster}"          # the owned cluster's utility: a cloud region's electricity is the provider's
g_per_kwh = 290.0
source = "Demo utility's fuel mix disclosure (fictional, written by meterbook demo)"
year = {year}

[whatif]                          # `meterbook whatif --month ...`
regions = ["aws:us-west-2", "aws:eu-north-1", "aws:ca-central-1"]
deferrable_namespaces = ["llm-finetune"]   # fine-tuning may wait for cleaner hours
deferrable_jobs = ["embed-batch-0"]        # ... and so may the embedding batch
shift_window_h = 24

# [findings]                      # defaults from sources/reference/assumptions.csv
# low_util_threshold = 0.5
# low_util_min_hours = 1
"""


def config_text(f: dict[str, Any], year: int, interval_s: int) -> str:
    hosts = "\n".join(f'"{i["host"]}" = "{i["id"]}"' for i in f["instances"] if "host" in i)
    namespaces = "\n".join(f'"{ns}" = "{team}"' for ns, team in TEAM_OF_NAMESPACE.items())
    return (f'# meterbook configuration for the demo platform (written by `meterbook demo`).\n'
            f'[teams]\ntag_keys = ["team", "cost-center", "project"]\nunallocated = "unallocated"\n\n'
            f'[teams.namespaces]\n{namespaces}\n\n[hosts]\n{hosts}\n\n'
            f'[telemetry]\ninterval_s = {interval_s}\ngap_multiple = 4\ndefault_zone = "aws:{REGION}"\n\n'
            f'[currency]\nreporting = "USD"\nrate_rule = "day"\nrounding = "half_even"\n\n'
            f'{ALLOCATION_TEXT.format(year=year, cluster=f["onprem"]["cluster"])}')


# ---- carbon: hourly grid intensity and contractual instruments ------------------------------

# Electricity Maps' hourly CSV export, 2024-onward header spelling
GRID_COLUMNS = [
    "Datetime (UTC)", "Country", "Zone name", "Zone id", "Carbon intensity gCO₂eq/kWh (direct)",
    "Carbon intensity gCO₂eq/kWh (Life cycle)", "Carbon-free energy percentage (CFE%)",
    "Renewable energy percentage (RE%)", "Data source", "Data estimated", "Data estimation method",
]
INSTRUMENT_COLUMNS = ["instrument_id", "type", "zone", "period_start", "period_end", "mwh", "g_per_kwh", "source", "year", "notes"]


def grid_rows(g: dict[str, Any], m0: datetime, m1: datetime) -> list[dict[str, str]]:
    """A month of hourly intensity shaped like a grid's day (cleanest at night, dirtiest in the
    evening peak) with noise; the days in missing_days are left out, as a provider's outage."""
    rng = random.Random(SEED + 2)
    rows, t = [], m0
    while t < m1:
        if t.day not in g["missing_days"]:
            swing = g["daily_swing"] * math.cos(2 * math.pi * (t.hour - g["peak_hour_utc"]) / 24)
            life = g["lifecycle_mean_g_per_kwh"] * (1 + swing + rng.gauss(0, g["noise"]))
            cfe = min(100.0, max(0.0, g["carbon_free_pct_mean"] * (1 - swing)))
            rows.append({"Datetime (UTC)": t.strftime("%Y-%m-%d %H:%M:%S"), "Country": g["country"], "Zone name": g["zone_name"],
                         "Zone id": g["zone_id"], "Carbon intensity gCO₂eq/kWh (direct)": f"{life * g['direct_share']:.2f}",
                         "Carbon intensity gCO₂eq/kWh (Life cycle)": f"{life:.2f}",
                         "Carbon-free energy percentage (CFE%)": f"{cfe:.2f}",
                         "Renewable energy percentage (RE%)": f"{cfe * g['renewable_share_of_cfe']:.2f}",
                         "Data source": g["data_source"], "Data estimated": "false", "Data estimation method": ""})
        t += timedelta(hours=1)
    return rows


def instrument_rows(f: dict[str, Any], year: int) -> list[dict[str, str]]:
    return [{"instrument_id": i["instrument_id"], "type": i["type"], "zone": i["zone"], "period_start": f"{year}-01-01",
             "period_end": f"{year}-12-31", "mwh": str(i["mwh"]), "g_per_kwh": str(i["g_per_kwh"]), "source": i["source"],
             "year": str(year), "notes": i["notes"]} for i in f["instruments_declared"]]


def write_demo(out: Path, month: str, gpus: int | None = None, interval_s: int = 30) -> list[Path]:
    m0, m1 = month_bounds(month)
    f = fleet()
    focus, cur = focus_rows(f, m0, m1), cur_rows(f, m0, m1)
    eu = next(a for a in f["accounts"] if a.get("currency") == "EUR")
    focus_eu = focus_rows(f, m0, m1, eu["id"])
    written = [
        write_csv(out / "billing" / f"focus-1.2_aws-111122223333_{month}.csv", FOCUS_12_COLUMNS, focus),
        write_csv(out / "billing" / f"cur-legacy_444455556666_{month}.csv", CUR_COLUMNS, cur),
        write_csv(out / "billing" / f"focus-1.2_aws-{eu['id']}_{month}.csv", FOCUS_12_COLUMNS, focus_eu),
        write_csv(out / "invoices" / f"invoices-{month}.csv", INVOICE_COLUMNS, invoice_rows(month, [
            (focus, "InvoiceId", "BillingAccountId", "BilledCost"),
            (cur, "bill/InvoiceId", "bill/PayerAccountId", "lineItem/UnblendedCost"),
            (focus_eu, "InvoiceId", "BillingAccountId", "BilledCost")], {eu["id"]: "EUR"})),
        # beside the bills: every run that ingests the billing folder has the rates that convert it
        write_csv(out / "billing" / f"rates-eur-usd_{month}.csv", RATE_COLUMNS, rate_rows(f["eur_usd"], m0, m1)),
    ]
    for inst in (i for i in f["instances"] if "host" in i and "sharing" not in i):
        written += telemetry_files(inst, m0, m1, out / "dcgm", interval_s, gpus)
    for inst in (i for i in f["instances"] if "sharing" in i):
        written += shared_gpu_files(inst, m0, m1, out, interval_s)
    written.append(write_csv(out / "codecarbon" / "emissions.csv", CODECARBON_COLUMNS, codecarbon_rows(f, m0)))
    written.append(write_csv(out / "work" / f"work_log_{month}.csv", WORK_COLUMNS, work_rows(f, m0, m1)))
    (out / "disclosures").mkdir(parents=True, exist_ok=True)
    (out / "disclosures" / "acme-embed-1b.yaml").write_text(DISCLOSURE, encoding="utf-8")
    written.append(write_csv(out / "grid" / f"{f['grid']['zone_id']}_{month}_hourly.csv", GRID_COLUMNS, grid_rows(f["grid"], m0, m1)))
    written.append(write_csv(out / "instruments" / "instruments.csv", INSTRUMENT_COLUMNS, instrument_rows(f, m0.year)))
    written.append(write_sacct(f["onprem"], m0, out / "slurm" / f"sacct-{month}.txt"))
    written += write_cluster_telemetry(f["onprem"], m0, out / "slurm", interval_s)
    (out / "meterbook.toml").write_text(config_text(f, m0.year - 1, interval_s) + cluster_config(f["onprem"]), encoding="utf-8")
    return written + [out / "disclosures" / "acme-embed-1b.yaml", out / "meterbook.toml"]
