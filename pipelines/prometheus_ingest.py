"""A month of DCGM telemetry pulled from a Prometheus-compatible server into the warehouse.

For each metric the pipeline reads (sources/dcgm_fields.csv) the server is asked how many series
it holds in the range, the hours not loaded yet are cut into chunks that stay within the budget
(sources/prometheus_pull.py), and each chunk's answer is written to a scratch file and ingested
like a saved query_range file (pipelines.ingest.ingest_file), under its query URL. Only one chunk
is on disk at a time, and none in memory.

A pull is all or nothing: each chunk commits as it arrives, and a chunk that fails (the server
refuses it, times out past its retries, answers something else, or the answer does not load)
removes every chunk this pull loaded, in one transaction, before its Error is reported. A pull
killed outright leaves whole chunks, each recorded: the next pull fetches only the hours they
lack. Hours are never fetched twice: a chunk's recorded URL says which hours it covers.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping

import duckdb

from core.errors import InputError
from core.months import month_bounds
from pipelines.config import Config
from pipelines.ingest import FileResult, FileStatus, Outcome, ingest_file, part_folder
from pipelines.progress import ticking
from pipelines.stage_inputs import apply_config
from sources import REGISTRY
from sources.bounded import limit
from sources.prometheus_pull import (
    HOUR_S,
    Budget,
    Chunk,
    Server,
    auth_headers,
    default_budget,
    fetch,
    loaded_hours,
    plan,
    pulled_metrics,
    selector,
    series_count,
    server_url,
    window_hours,
)
from sources.reference_data import load_reference

# Series are counted a day at a time: chunks are sized by the day's series, and a day without any
# is not queried for samples.
SERIES_SPAN_S = 24 * HOUR_S


@dataclass(frozen=True)
class Pull:
    server: Server
    start_s: int          # whole hours, UTC epoch seconds; end exclusive
    end_s: int
    step_s: float
    budget: Budget


def pull_range(month: str | None, start: str | None, end: str | None, now: datetime | None = None) -> tuple[int, int]:
    """[start, end) in epoch seconds, whole hours, of --month or --from/--to (ISO 8601, UTC), ending
    no later than the last whole hour settled before `now`: an hour still being scraped is left
    for a later pull (its chunk, once recorded, is never fetched again)."""
    if month and (start or end):
        raise InputError("--month", "given with --from/--to", "", "Pass either --month or --from and --to")
    if month:
        lo, hi = (t.replace(tzinfo=timezone.utc) for t in month_bounds(month))
    elif start and end:
        lo, hi = parse_time("--from", start), parse_time("--to", end)
    else:
        raise InputError("prometheus", "no time range", "", "Pass --month YYYY-MM, or --from and --to (ISO 8601, UTC)")
    # an hour is over once the server has its last scrapes too: prometheus_settle_s after its end
    settled_s = int((now or datetime.now(timezone.utc)).timestamp() - limit("prometheus_settle_s"))
    lo_s = int(lo.timestamp()) // HOUR_S * HOUR_S
    hi_s = min(-(-int(hi.timestamp()) // HOUR_S) * HOUR_S, settled_s // HOUR_S * HOUR_S)
    if hi_s <= lo_s:
        raise InputError("prometheus", "nothing to pull", f"{lo.isoformat()} to {hi.isoformat()} holds no whole past hour",
                         "Pick a range that has ended")
    return lo_s, hi_s


def parse_time(option: str, text: str) -> datetime:
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{option} {text}", "not a time", "expected ISO 8601, e.g. 2026-10-01T00:00:00Z", "Fix the time") from None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def planned(con: duckdb.DuckDBPyConnection, p: Pull, scratch: Path) -> list[Chunk]:
    """The chunks still to fetch, day by day: a day without series costs one series query, and
    each day's chunks are sized by the series of that day (pods come and go within a month).
    One query asks every metric the pipeline reads: a chunk holds whole scrapes, as a scrape
    file does (a GPU-hour's scrapes are counted per file, over its best-covered metric)."""
    names = [r[0] for r in con.execute("select path from source_files where status = 'loaded' and starts_with(path, ?)",
                                       [p.server.url + "/api/v1/query_range?"]).fetchall()]
    done = loaded_hours(names, p.server.url)
    query = selector(pulled_metrics())
    out: list[Chunk] = []
    # UTC days: a range starting mid-day has a short first span
    edges = [p.start_s, *range(p.start_s // SERIES_SPAN_S * SERIES_SPAN_S + SERIES_SPAN_S, p.end_s, SERIES_SPAN_S), p.end_s]
    for lo, hi in zip(edges, edges[1:]):
        if all_loaded(done, lo, hi) or not (series := series_count(p.server, query, lo, hi, p.budget, scratch)):
            continue
        hours = window_hours(series, p.step_s, p.budget)
        if hours < 1:
            raise InputError(f"{p.server.url}", f"{series} series at a {p.step_s:g} s step exceed one query's budget in one hour",
                             f"--max-samples {p.budget.max_samples}, --max-points {p.budget.max_points}",
                             "Raise --max-samples up to the server's --query.max-samples, or raise [telemetry] interval_s")
        out.extend(plan(query, lo, hi, p.step_s, hours, done))
    return out


def all_loaded(done: set[int], start_s: int, end_s: int) -> bool:
    return all(h in done for h in range(start_s // HOUR_S, end_s // HOUR_S))


def pull(con: duckdb.DuckDBPyConnection, p: Pull, progress: Callable[[int, int, Outcome], None] | None = None,
         config: Config | None = None) -> list[Outcome]:
    """Fetch and load the chunks not loaded yet; every chunk's outcome (module docstring: a
    failure leaves the warehouse as the pull found it, the loaded chunks `rolled back`)."""
    load_reference(con)
    apply_config(con, config or Config())
    scratch = part_folder(con, "pull") or Path(tempfile.mkdtemp(prefix=".meterbook-pull-"))
    out: list[Outcome] = []
    try:
        chunks = planned(con, p, scratch)
        for i, chunk in enumerate(chunks, 1):
            name = chunk.name(p.server.url)
            dest = scratch / "chunk.json"
            try:
                with ticking(f"[{i}/{len(chunks)}]", f"fetching and loading {name}".format) if progress else nullcontext():
                    fetch(p.server, "/api/v1/query_range", chunk.params(), dest, name, p.budget)
                    res: Outcome = ingest_file(con, dest, "prom-range", recorded_as=name)
            except InputError as exc:
                res = FileStatus(name, "failed", exc)
            finally:
                dest.unlink(missing_ok=True)
            out.append(res)
            if progress:
                progress(i, len(chunks), res)
            if isinstance(res, FileStatus):
                undo(con, [r.path for r in out if isinstance(r, FileResult) and r.status == "loaded"])
                out = [FileStatus(r.path, "rolled back") if isinstance(r, FileResult) else r for r in out]
                out += [FileStatus(c.name(p.server.url), "not tried") for c in chunks[i:]]
                break
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def undo(con: duckdb.DuckDBPyConnection, names: list[str]) -> None:
    """Remove the chunks recorded under `names` (loaded by this pull), in one transaction."""
    rows = con.execute("select file_id, kind from source_files where status = 'loaded' and list_contains(?, path)", [names]).fetchall()
    ids = [r[0] for r in rows]
    con.execute("begin transaction")
    try:
        for file_id, kind in rows:
            REGISTRY[kind].remove(con, file_id)
        for table in ("rejects", "row_findings", "source_files"):
            con.execute(f"delete from {table} where list_contains(?, file_id)", [ids])
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise



def make_pull(url: str, config: Config, month: str | None, start: str | None, end: str | None,
              max_points: int | None = None, max_samples: int | None = None,
              env: Mapping[str, str] | None = None) -> Pull:
    """The pull the command line and [prometheus] describe: the server (auth from the
    environment or the files [prometheus] names), the range, the step ([telemetry] interval_s)
    and the budget (options, else [prometheus], else sources/input_limits.csv)."""
    pc = config.prometheus
    env = os.environ if env is None else env
    headers = [*pc.headers.items(), *auth_headers(env, pc.token_file, pc.user, pc.password_file)]
    budget = default_budget()
    budget = replace(budget, max_points=max_points or pc.max_points or budget.max_points,
                     max_samples=max_samples or pc.max_samples or budget.max_samples)
    lo, hi = pull_range(month, start, end)
    return Pull(Server(server_url(url), tuple(headers), pc.ca_file), lo, hi, config.interval_s, budget)
