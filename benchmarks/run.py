"""`make bench`: run every benchmarks/bench_*.py module's `main()` (or only those named), then
print one table of every figure that has a target (benchmarks.common.target), pass or fail.

Benchmarks print their own figures; they are not tests and are never timed inside pytest.
Exit status 1 when a target fails or a bench crashes (the others still run).
Usage: python -m benchmarks.run [NAME ...]   e.g. python -m benchmarks.run billing
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import time
import traceback

import benchmarks
from benchmarks.common import TARGETS, summary


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))
    wanted = [n for n in names if not argv or n.removeprefix("bench_") in argv]
    crashed = []
    for name in wanted:
        # Other work on the machine inflates wall times: the load says how much to trust them.
        print(f"== {name} (load average {os.getloadavg()[0]:.2f})", flush=True)
        t0 = time.perf_counter()
        try:
            importlib.import_module(f"benchmarks.{name}").main()
        except Exception:
            traceback.print_exc()
            crashed.append(name)
        print(f"== {name} done in {time.perf_counter() - t0:.1f} s", flush=True)
    print("\n== summary: every figure against its target", flush=True)
    print(summary(TARGETS, crashed), flush=True)
    return 1 if crashed or not all(t.passed for t in TARGETS if t.judged) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
