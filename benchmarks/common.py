"""Shared benchmark helpers: run a command in a child process, report wall time and peak RSS,
and record each figure that has a target for the summary `make bench` ends with."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

BENCH_DIR = Path(os.environ.get("MB_BENCH_DIR", "build/bench"))
# Runs of each figure a target compares (a floor and the ingest measured against it), taken in
# turn: the fastest counts. On a shared 2-core VM one run of the same code moved a ratio by a tenth.
REPEAT = int(os.environ.get("MB_BENCH_REPEAT", "2"))


# Run last in each measured child: its peak RSS in kB (ru_maxrss where /proc is missing).
PEAK_RSS = """
import resource
def _peak_kb():
    try:
        with open('/proc/self/status') as f:
            return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print('__RSS__', _peak_kb())"""


def measure(code: str) -> dict[str, Any]:
    """Run Python `code` in a fresh interpreter; wall seconds and that child's peak RSS in MB.

    Each measurement gets its own process, and its peak is the kernel's high-water mark of that
    process's own memory (VmHWM). Not ru_maxrss: Linux carries it across exec, so a child
    started by a large bench process (vfork) reported at least the parent's size (every
    telemetry case once showed the same 384 MB).
    """
    t0 = time.perf_counter()
    code = "import duckdb; duckdb.default_connection().execute('set enable_progress_bar = false')\n" + code
    proc = subprocess.run([sys.executable, "-c", code + "\n" + PEAK_RSS], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    rss_kb = next(int(ln.split()[1]) for ln in proc.stdout.splitlines() if ln.startswith("__RSS__"))
    out = [ln for ln in proc.stdout.splitlines() if not ln.startswith("__RSS__")]
    return {"wall_s": wall, "peak_rss_mb": rss_kb / 1024, "stdout": "\n".join(out)}


def best_of(runs: list[dict]) -> dict:
    """The fastest run's time and output, the largest peak RSS of them all (memory is judged on
    the worst run), and every run's time."""
    fastest = min(runs, key=lambda r: r["wall_s"])
    return {**fastest, "peak_rss_mb": max(r["peak_rss_mb"] for r in runs), "runs_s": [round(r["wall_s"], 2) for r in runs]}


def measure_in_turn(codes: list[str], repeat: int | None = None) -> list[dict]:
    """Each of `codes` (floors, and the work a target judges against them) run `repeat` times
    (MB_BENCH_REPEAT) and `best_of` each, the runs taken in turn (a, b, a, b): this shared
    2-core VM's speed drifts within hours (one commit's CUR ratio measured 1.36 one morning and
    1.59 that afternoon), and a ratio of runs taken minutes apart measured the drift as well."""
    runs: list[list[dict]] = [[] for _ in codes]
    for _ in range(repeat or REPEAT):
        for code, done in zip(codes, runs):
            done.append(measure(code))
    return [best_of(r) for r in runs]


def ingest_code(path: Path, warehouse: Path, parts: dict[str, tuple[str, ...]]) -> str:
    """Child code for `measure`: one ingest into a new warehouse with its time split into
    `parts` (benchmarks.ingest_parts), the warehouse removed after it, so that a repeat is a
    first ingest again and not an 'unchanged' file."""
    return f"""
import os
from benchmarks.ingest_parts import main
main({str(path)!r}, {str(warehouse)!r}, {parts!r})
for p in ({str(warehouse)!r}, {str(warehouse) + '.wal'!r}):
    if os.path.exists(p):
        os.remove(p)"""


def report(name: str, figures: dict) -> None:
    print(json.dumps({"benchmark": name, **figures}, indent=2, default=str), flush=True)


@dataclass(frozen=True)
class Target:
    """One figure against its target: `value` must be at most `target` (or, with at_least, at least)."""
    bench: str
    metric: str
    value: float
    target: float
    unit: str = ""
    at_least: bool = False
    judged: bool = True      # False: shown beside the others, outside what the target covers

    @property
    def passed(self) -> bool:
        return self.value >= self.target if self.at_least else self.value <= self.target


TARGETS: list[Target] = []   # filled by the benches of one `benchmarks.run`, printed at its end


def target(bench: str, metric: str, value: float, target: float, unit: str = "", at_least: bool = False,
           judged: bool = True) -> Target:
    """Record a figure with a target for the closing summary; call it beside `report`. judged=False:
    a figure outside the target's scope, printed with the target for comparison and never a FAIL."""
    t = Target(bench, metric, float(value), float(target), unit, at_least, judged)
    TARGETS.append(t)
    return t


def summary(targets: list[Target], failed_benches: Sequence[str] = ()) -> str:
    """The closing table: every figure against its target, pass or fail; benches that crashed."""
    def fmt(x: float) -> str:   # three significant digits, never an exponent for large figures
        return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"

    rows = [("bench", "metric", "value", "target", "")]
    for t in targets:
        rows.append((t.bench, t.metric, f"{fmt(t.value)} {t.unit}".strip(),
                     f"{'>=' if t.at_least else '<='} {fmt(t.target)} {t.unit}".strip(), ("pass" if t.passed else "FAIL") if t.judged else "not judged"))
    rows += [(name, "(crashed: see its traceback above)", "", "", "FAIL") for name in failed_benches]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cli(*args: str) -> str:
    """meterbook's command line in a child process (as a user runs it); its stdout."""
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], check=True, capture_output=True, text=True).stdout
