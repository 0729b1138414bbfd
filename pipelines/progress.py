"""Long work says what it is doing: a line on stderr every TICK_S seconds while a build or a
file's ingest runs (a month of CUR or telemetry takes minutes, on Spark hours), and the seconds
each model took, for the runner to report or a benchmark to print."""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Any, Callable, Iterator

TICK_S = 10.0


@contextlib.contextmanager
def ticking(label: str, status: Callable[[], str], every_s: float | None = None) -> Iterator[None]:
    """While the block runs, every `every_s` seconds (TICK_S) print `label`, the time so far and `status()`."""
    every_s = every_s or TICK_S
    done = threading.Event()

    def tick() -> None:
        t0 = time.monotonic()
        while not done.wait(every_s):
            print(f"{label} working {time.monotonic() - t0:.0f} s: {status()}", file=sys.stderr, flush=True)

    thread = threading.Thread(target=tick, name="progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


class BuildProgress:
    """The models of a build: how many are done, which run and since when, and the seconds each
    took. Models may run on several threads at once (the Spark build)."""

    def __init__(self, total: int = 0, percent: Callable[[], float] | None = None) -> None:
        self.total = total
        self.percent = percent          # how far the running statement is (DuckDB), or None
        self.seconds: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self.lock = threading.Lock()
        self.scope: Any = None          # the months the build rebuilt (pipelines.month_scope.Scope)
        self.patched: list[str] = []    # months whose previous-month comparison alone was rewritten

    @contextlib.contextmanager
    def model(self, name: str) -> Iterator[None]:
        t0 = time.monotonic()
        with self.lock:
            self.running[name] = t0
        try:
            yield
        finally:
            with self.lock:
                del self.running[name]
                self.seconds[name] = time.monotonic() - t0

    def status(self) -> str:
        now = time.monotonic()
        with self.lock:
            running = ", ".join(f"{n} {now - t:.0f} s" for n, t in sorted(self.running.items(), key=lambda kv: kv[1]))
            done = len(self.seconds)
        pct = self.percent() if self.percent is not None else -1
        where = f" ({pct:.0f}% of its current step)" if pct >= 0 and running else ""
        return f"{done} of {self.total} models done; running {running or 'the contracts'}{where}"

    def slowest(self, n: int = 8) -> list[tuple[str, float]]:
        return sorted(self.seconds.items(), key=lambda kv: -kv[1])[:n]
