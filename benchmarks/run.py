"""`make bench`: run every benchmarks/bench_*.py module's `main()` (or only those named).

Benchmarks print their own figures; they are not tests and are never timed inside pytest.
Usage: python -m benchmarks.run [NAME ...]   e.g. python -m benchmarks.run billing
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import benchmarks


def main(argv: list[str]) -> None:
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))
    wanted = [n for n in names if not argv or n.removeprefix("bench_") in argv]
    for name in wanted:
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        importlib.import_module(f"benchmarks.{name}").main()
        print(f"== {name} done in {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
