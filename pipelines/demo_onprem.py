"""The demo's on-premises Slurm cluster: its accounting export (sacct --parsable2, with the
header) and its [[clusters]] cost model, from the [onprem] section of demo_fleet.toml."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.units import S_PER_H

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
            f'partitions = ["{onprem["partition"]}"]\n\n'
            # its charge lines are zone owned:<cluster>; the site's grid, as an operator states it
            f'[carbon.grid_zones]\n"owned:{onprem["cluster"]}" = "{onprem["grid_zone"]}"\n')
