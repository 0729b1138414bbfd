"""The demo's on-premises Slurm cluster: its accounting export (sacct --parsable2, with the
header), a few hours of its nodes' telemetry (dcgm-exporter series labelled hpc_job on one node,
an nvidia-smi --query-gpu log on the other) and its [[clusters]] cost model, from the [onprem]
section of demo_fleet.toml."""
from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.units import J_PER_KWH, MJ_PER_KWH, S_PER_H

SACCT_FIELDS = ["JobID", "JobName", "User", "Account", "Partition", "AllocTRES", "ElapsedRaw", "Start", "End",
                "NodeList", "State"]


def local(ts: datetime) -> str:
    """sacct's default time format (SLURM_TIME_FORMAT unset): ISO 8601 without a zone."""
    return ts.strftime("%Y-%m-%dT%H:%M:%S")


def sacct_lines(onprem: dict[str, Any], m0: datetime) -> list[str]:
    """The allocation row of each job, then its steps (which share its window and GPUs)."""
    lines = ["|".join(SACCT_FIELDS)]
    for j in onprem["jobs"]:
        if "start_h" not in j:      # pending: no start, no end
            cells = [j["job_id"], j["name"], j["user"], j["account"], onprem["partition"], j["tres"], "0",
                     "Unknown", "Unknown", j["nodes"], j["state"]]
            lines.append("|".join(cells))
            continue
        start = m0 + timedelta(hours=j["start_h"])
        elapsed = int(j["hours"] * S_PER_H)
        end = "Unknown" if j["state"] == "RUNNING" else local(start + timedelta(seconds=elapsed))
        lines.append("|".join([j["job_id"], j["name"], j["user"], j["account"], onprem["partition"], j["tres"], str(elapsed),
                               local(start), end, j["nodes"], j["state"]]))
        step_tres = j["tres"].split(",", 1)[1]     # a step carries no billing TRES
        for step in j["steps"]:
            lines.append("|".join([f"{j['job_id']}.{step}", step, "", j["account"], onprem["partition"], step_tres,
                                   str(elapsed), local(start), end, j["nodes"], j["state"].split(" ")[0]]))
    return lines


def write_sacct(onprem: dict[str, Any], m0: datetime, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(sacct_lines(onprem, m0)) + "\n", encoding="utf-8")
    return path


def cluster_config(onprem: dict[str, Any]) -> str:
    """The meterbook.toml lines for the cluster: its accounts' teams and its cost model (the
    purchase price, lifetime and running cost come from sources/reference)."""
    accounts = "\n".join(f'"{a}" = "{t}"' for a, t in onprem["accounts"].items())
    return (f"\n[teams.accounts]                  # Slurm accounts of the on-premises cluster -> team\n{accounts}\n\n"
            f"[[clusters]]                      # the on-premises Slurm cluster: no bill, a cost pool\n"
            f'name = "{onprem["cluster"]}"\ngpus = {onprem["gpus"]}\ngpu_model = "{onprem["gpu_model"]}"\n'
            f'partitions = ["{onprem["partition"]}"]\nhosts = {json.dumps(onprem["hosts"])}\n\n'
            # its charge lines are zone owned:<cluster>; the site's grid, as an operator states it
            f'[carbon.grid_zones]\n"owned:{onprem["cluster"]}" = "{onprem["grid_zone"]}"\n')


def gpus_held(onprem: dict[str, Any], host: str, hour: float) -> dict[int, tuple[str, float]]:
    """GPU index -> (job id, watts) of the jobs running on `host` at `hour` (hours into the
    month): each job its GPUs over its nodes, the next free indices in the export's order."""
    held: dict[int, tuple[str, float]] = {}
    for j in onprem["jobs"]:
        if "start_h" not in j or not j["start_h"] <= hour < j["start_h"] + j["hours"]:
            continue
        nodes = hostlist(j["nodes"])
        if host in nodes:
            gpus = int(next(c for c in j["tres"].split(",") if c.startswith("gres/gpu")).split("=")[1]) // len(nodes)
            for _ in range(gpus):
                held[len(held)] = (j["job_id"], onprem["watts"][j["job_id"]])
    return held


def hostlist(nodes: str) -> list[str]:
    """The demo's NodeLists: one host, or one range (hpc-a[01-02])."""
    if "[" not in nodes:
        return [nodes]
    prefix, rng = nodes.rstrip("]").split("[")
    lo, hi = rng.split("-")
    return [f"{prefix}{n:0{len(lo)}d}" for n in range(int(lo), int(hi) + 1)]


def node_uuid(host: str, idx: int) -> str:
    return "GPU-" + str(uuid.UUID(int=hash_int(f"{host}/{idx}")))


def hash_int(text: str) -> int:
    import hashlib
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")


def write_cluster_telemetry(onprem: dict[str, Any], m0: datetime, out: Path, interval_s: int) -> list[Path]:
    """Each [onprem] telemetry window as its node writes it: dcgm-exporter scrapes with an energy
    counter and power (a series per job mapped to the GPU: hpc_job), or an nvidia-smi log."""
    per_host = len(onprem["hosts"])
    gpus = onprem["gpus"] // per_host
    paths = []
    for win in onprem["telemetry"]:
        host, lines = win["host"], []
        counters = [hash_int(f"{host}/{g}/mJ") % 10**10 for g in range(gpus)]
        for k in range(int(win["hours"] * S_PER_H // interval_s)):
            hour = win["start_h"] + k * interval_s / S_PER_H
            t = m0 + timedelta(hours=hour)
            held = gpus_held(onprem, host, hour)
            for g in range(gpus):
                job, watts = held.get(g, ("", onprem["idle_w"]))
                counters[g] += int(watts * interval_s * MJ_PER_KWH / J_PER_KWH)   # mJ
                if win["source"] == "dcgm":
                    ms = int((t - datetime(1970, 1, 1)).total_seconds() * 1000)
                    labels = (f'gpu="{g}",UUID="{node_uuid(host, g)}",device="nvidia{g}",modelName="NVIDIA H100 80GB HBM3",'
                              f'Hostname="{host}"' + (f',hpc_job="{job}"' if job else ""))
                    lines.append(f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{labels}}} {counters[g]} {ms}")
                    lines.append(f"DCGM_FI_DEV_POWER_USAGE{{{labels}}} {watts:.3f} {ms}")
                else:
                    lines.append(f"{t:%Y/%m/%d %H:%M:%S}.000, NVIDIA H100 80GB HBM3, {node_uuid(host, g)}, {g}, {watts:.2f} W")
        if win["source"] == "dcgm":
            path = out / f"{host}.prom"
            head = ["# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter", "# TYPE DCGM_FI_DEV_POWER_USAGE gauge"]
        else:
            path = out / f"{host}.csv"       # nvidia-smi names no host: the file's name does
            head = ["timestamp, name, uuid, index, power.draw [W]"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(head + lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
