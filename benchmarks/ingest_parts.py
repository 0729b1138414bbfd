"""One ingest with its time split into parts, run by the benches in their child process: the
seconds of each part of the ingest's SQL (statements matched by how they start), the scan
thread's (sha256 and the independent line count, beside DuckDB on a second thread), and the
fixed costs (imports, opening the warehouse). Prints one JSON line."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, cast

T0 = time.perf_counter()    # the interpreter is up; nothing of meterbook is imported yet


class TimedConnection:
    """A connection whose execute() adds each statement's wall time to the first part whose
    prefixes the statement starts with (else to 'other statements')."""

    def __init__(self, con: Any, parts: dict[str, tuple[str, ...]]) -> None:
        self.con = con
        self.parts = parts
        self.seconds = {label: 0.0 for label in [*parts, "other statements"]}

    def execute(self, sql: str, params: Any = None) -> Any:
        words = " ".join(sql.split()).lower()
        label = next((p for p, starts in self.parts.items() if words.startswith(starts)), "other statements")
        t = time.perf_counter()
        try:
            return self.con.execute(sql, params)
        finally:
            self.seconds[label] += time.perf_counter() - t

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


def main(path: str, warehouse: str, parts: dict[str, tuple[str, ...]]) -> None:
    import pipelines.ingest as runner
    from pipelines.warehouse import connect
    imported = time.perf_counter()
    con = connect(Path(warehouse))
    connected = time.perf_counter()
    scans: list[tuple[float, float]] = []
    scan = runner.scan

    def timed_scan(*args: Any, **kwargs: Any) -> Any:
        t, c = time.perf_counter(), time.thread_time()
        try:
            return scan(*args, **kwargs)
        finally:
            scans.append((time.perf_counter() - t, time.thread_time() - c))

    runner.scan = cast(Callable, timed_scan)
    timed = TimedConnection(con, parts)
    # a folder is every file in it, ingested by the one command; rows and totals summed
    results = runner.ingest(cast(Any, timed), [Path(path)])
    done = time.perf_counter()
    totals: dict[str, Any] = {}
    for r in results:
        for k, v in r.totals.items():
            totals[k] = totals.get(k, 0) + v if isinstance(v, (int, float)) else v
    print(json.dumps({
        "files": len(results), "rows_read": sum(r.rows_read for r in results),
        "rows_loaded": sum(r.rows_loaded for r in results), "rows_rejected": sum(r.rows_rejected for r in results),
        "totals": totals,
        "imports_s": imported - T0, "connect_s": connected - imported, "ingest_s": done - connected,
        "parts_s": timed.seconds, "scan_wall_s": sum(s[0] for s in scans), "scan_cpu_s": sum(s[1] for s in scans),
    }, default=str))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], {k: tuple(v) for k, v in json.loads(sys.argv[3]).items()})
