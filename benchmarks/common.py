"""Shared benchmark helpers: run a command in a child process, report wall time and peak RSS."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(os.environ.get("MB_BENCH_DIR", "build/bench"))


def measure(code: str) -> dict[str, float]:
    """Run Python `code` in a fresh interpreter; wall seconds and that child's peak RSS in MB.

    Each measurement gets its own process so peak RSS is the child's alone (ru_maxrss of
    RUSAGE_CHILDREN is the maximum over children, so one child per call keeps it honest).
    """
    t0 = time.perf_counter()
    code = "import duckdb; duckdb.default_connection().execute('set enable_progress_bar = false')\n" + code
    proc = subprocess.run([sys.executable, "-c", code + "\nimport resource, json; "
                           "print('__RSS__', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    rss_kb = next(int(ln.split()[1]) for ln in proc.stdout.splitlines() if ln.startswith("__RSS__"))
    out = [ln for ln in proc.stdout.splitlines() if not ln.startswith("__RSS__")]
    return {"wall_s": wall, "peak_rss_mb": rss_kb / 1024, "stdout": "\n".join(out)}


def report(name: str, figures: dict) -> None:
    print(json.dumps({"benchmark": name, **figures}, indent=2, default=str), flush=True)
