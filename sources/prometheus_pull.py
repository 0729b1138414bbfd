"""Telemetry pulled from a Prometheus-compatible HTTP API (Prometheus, Thanos, Mimir,
VictoriaMetrics): which series exist (/api/v1/series), and their samples at the telemetry
interval (/api/v1/query_range) in chunks of whole hours that stay under the server's limits.

Each chunk's answer is written to a file as it arrives, never held whole: the file is a
query_range matrix, which sources.prom_export.PromRangeReader stages like any saved one. The
chunk is named by its query URL (server, query, range, step; never credentials), which is
what lineage records and what tells a later pull which hours are loaded already.
"""
from __future__ import annotations

import base64
import csv
import json
import math
import os
import shutil
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Mapping

from core.errors import InputError
from sources.bounded import limit

HOUR_S = 3600
FIELDS_FILE = Path(__file__).with_name("dcgm_fields.csv")
# Environment variables that carry credentials: never a command-line option (shell history,
# process lists) and never recorded in the warehouse or a report.
TOKEN_ENV, TOKEN_FILE_ENV = "MB_PROMETHEUS_TOKEN", "MB_PROMETHEUS_TOKEN_FILE"
USER_ENV, PASSWORD_ENV, PASSWORD_FILE_ENV = "MB_PROMETHEUS_USER", "MB_PROMETHEUS_PASSWORD", "MB_PROMETHEUS_PASSWORD_FILE"
# How much of an error answer is read for its message.
ERROR_BODY_BYTES = 1 << 16
SNIFF_BYTES = 1 << 12


@dataclass(frozen=True)
class Server:
    """Where to pull from and how: `url` is http(s)://host:port[/prefix] without credentials
    (what lineage shows); `headers` carry auth and tenant headers."""
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    ca_file: str | None = None
    timeout_s: float = 0.0      # 0: prometheus_timeout_s


@dataclass(frozen=True)
class Budget:
    """What one query may ask of the server (sources/input_limits.csv has the defaults)."""
    max_points: int       # points per series: Prometheus refuses more than 11,000 per query_range
    max_samples: int      # points per query over all series: the server's --query.max-samples
    retries: int          # further tries after a 5xx or a timeout
    backoff_s: float      # the first wait; doubled after each try


def default_budget() -> Budget:
    return Budget(int(limit("prometheus_points_per_series_max")), int(limit("prometheus_samples_per_query_max")),
                  int(limit("prometheus_retries_max")), limit("prometheus_backoff_s"))


def server_url(text: str) -> str:
    """http(s)://host:port[/prefix] of `prometheus://host:port[/prefix]` (plain HTTP) or an
    http(s) URL; credentials in the URL are refused (they would reach lineage and history)."""
    parts = urllib.parse.urlsplit(text.strip())
    scheme = {"prometheus": "http", "http": "http", "https": "https"}.get(parts.scheme)
    if scheme is None or not parts.hostname:
        raise InputError(text, "not a Prometheus URL", "expected prometheus://HOST:PORT[/path] or http(s)://HOST:PORT[/path]",
                         "Check the URL")
    if parts.username or parts.password:
        raise InputError(urllib.parse.urlunsplit((parts.scheme, parts.hostname + (f":{parts.port}" if parts.port else ""),
                                                  parts.path, "", "")),
                         "credentials in the URL", "user:password@", f"Remove them; set {USER_ENV} and {PASSWORD_ENV} "
                         f"(or {TOKEN_ENV} for a bearer token) in the environment instead")
    return urllib.parse.urlunsplit((scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def secret(env: Mapping[str, str], name: str, file_name: str, file_path: str | None) -> str | None:
    """A credential from the variable `name`, else from the file the variable `file_name` or the
    config names (its first line)."""
    if env.get(name):
        return env[name]
    path = env.get(file_name) or file_path
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        raise InputError(path, "cannot read the credential file", file_name, "Check the path and that its first line is the secret") from None


def auth_headers(env: Mapping[str, str], token_file: str | None = None, user: str | None = None,
                 password_file: str | None = None) -> list[tuple[str, str]]:
    """Authorization from the environment (or the files [prometheus] names): a bearer token, else
    basic auth; none when neither is set."""
    token = secret(env, TOKEN_ENV, TOKEN_FILE_ENV, token_file)
    if token:
        return [("Authorization", f"Bearer {token}")]
    user = env.get(USER_ENV) or user
    password = secret(env, PASSWORD_ENV, PASSWORD_FILE_ENV, password_file)
    if user and password is not None:
        return [("Authorization", "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())]
    return []


# kube-state-metrics' series of what pods reserved: the shared-GPU split reads their GPU resources
REQUEST_METRICS = ("kube_pod_container_resource_requests", "kube_pod_container_resource_limits")
# The resources pulled: GPU ones in either spelling (nvidia.com/gpu, nvidia_com_mig_1g_10gb);
# a series with no resource label (every DCGM series) matches the empty alternative.
GPU_RESOURCES = "|nvidia[._]com[/_].*"


def pulled_metrics(fields_file: Path = FIELDS_FILE) -> tuple[str, ...]:
    """The exporter metric names the pipeline reads (sources/dcgm_fields.csv; dcgmi dmon's column
    names are not Prometheus series), then the pods' requests and limits."""
    with open(fields_file, newline="", encoding="utf-8") as fh:
        return tuple(r["field_name"] for r in csv.DictReader(fh) if not r["field_name"].startswith("dmon:")) + REQUEST_METRICS


def window_hours(series: int, step_s: float, budget: Budget) -> int:
    """Whole hours one query of `series` series may span at `step_s`: its points per series and
    in all stay within the budget. 0 when not even one hour does."""
    per_hour = math.ceil(HOUR_S / step_s)
    return min(budget.max_points // per_hour, budget.max_samples // (per_hour * max(series, 1)))


@dataclass(frozen=True)
class Chunk:
    """One query_range: `query` over [start_s, end_s) (whole hours) at `step_s`."""
    query: str
    start_s: int
    end_s: int
    step_s: float

    def params(self) -> list[tuple[str, str]]:
        # query_range includes both ends: the last point stops a step before the next chunk's first
        return [("query", self.query), ("start", iso(self.start_s)), ("end", iso(self.end_s - self.step_s)),
                ("step", f"{self.step_s:g}s")]

    def name(self, url: str) -> str:
        """The chunk as lineage records it: the query's URL."""
        return f"{url}/api/v1/query_range?{urllib.parse.urlencode(self.params())}"


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + (f".{round(t % 1 * 1000):03d}Z" if t % 1 else "Z")


def chunk_of(name: str, url: str) -> Chunk | None:
    """The chunk a recorded name (Chunk.name) stands for, when it is of this server."""
    prefix = f"{url}/api/v1/query_range?"
    if not name.startswith(prefix):
        return None
    q = dict(urllib.parse.parse_qsl(name[len(prefix):]))
    if not {"query", "start", "end", "step"} <= q.keys():
        return None
    try:
        step = float(q["step"].rstrip("s"))
        start = datetime.fromisoformat(q["start"].replace("Z", "+00:00")).timestamp()
        end = datetime.fromisoformat(q["end"].replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    return Chunk(q["query"], int(start), int(round(end + step)), step)


def selector(metrics: Iterable[str]) -> str:
    """One series selector for every metric named (names are [A-Za-z0-9_:], nothing to escape),
    of the GPU resources where a series has a resource label (GPU_RESOURCES)."""
    return '{__name__=~"' + "|".join(metrics) + '",resource=~"' + GPU_RESOURCES + '"}'


def loaded_hours(names: Iterable[str], url: str) -> set[int]:
    """Hours (epoch hour numbers) the recorded chunks of this server cover, whatever their query
    asked: a query grown by a metric must not fetch (and count) those hours' samples again."""
    hours: set[int] = set()
    for name in names:
        if (c := chunk_of(name, url)) is not None:
            hours.update(range(c.start_s // HOUR_S, math.ceil(c.end_s / HOUR_S)))
    return hours


def plan(query: str, start_s: int, end_s: int, step_s: float, hours_per_chunk: int, loaded: set[int]) -> list[Chunk]:
    """Chunks of at most `hours_per_chunk` hours covering the hours of [start_s, end_s) (hour
    aligned) not in `loaded`: a run of missing hours is cut into chunks, loaded hours are skipped."""
    out: list[Chunk] = []
    run: list[int] = []
    for h in [*range(start_s // HOUR_S, end_s // HOUR_S), None]:
        if h is not None and h not in loaded and (not run or (h == run[-1] + 1 and len(run) < hours_per_chunk)):
            run.append(h)
            continue
        if run:
            out.append(Chunk(query, run[0] * HOUR_S, (run[-1] + 1) * HOUR_S, step_s))
        run = [h] if h is not None and h not in loaded else []
    return out


# ---- HTTP ------------------------------------------------------------------------------------

class Retry(Exception):
    """A failure worth trying again (a 5xx, a timeout, a connection cut), and what it was."""


def opener(server: Server) -> Callable[[urllib.request.Request, float], object]:
    context = ssl.create_default_context(cafile=server.ca_file) if server.url.startswith("https") else None

    def open_(req: urllib.request.Request, timeout: float) -> object:
        return urllib.request.urlopen(req, timeout=timeout, context=context)   # noqa: S310 (http(s) only: server_url)
    return open_


def fetch(server: Server, path: str, params: list[tuple[str, str]], dest: Path, what: str, budget: Budget,
          sleep: Callable[[float], None] = time.sleep) -> None:
    """GET `path` into `dest` (streamed), trying again after a 5xx or timeout with exponential
    backoff (budget.retries more tries); anything else, or the last failure, is one InputError
    naming `what`."""
    req = urllib.request.Request(f"{server.url}{path}?{urllib.parse.urlencode(params)}", headers=dict(server.headers))
    timeout = server.timeout_s or limit("prometheus_timeout_s")
    open_ = opener(server)
    for attempt in range(budget.retries + 1):
        try:
            fetch_once(open_, req, timeout, dest, what)
            check_answer(dest, what, server.url)
            return
        except Retry as exc:
            if attempt == budget.retries:
                raise InputError(what, f"no good answer in {attempt + 1} tries", f"last: {exc}",
                                 "Try again later, or lower --max-samples so each query asks less of the server") from None
            sleep(budget.backoff_s * 2 ** attempt)


def fetch_once(open_: Callable[[urllib.request.Request, float], object], req: urllib.request.Request, timeout: float,
               dest: Path, what: str) -> None:
    """One GET into `dest`: Retry for what may pass (a 5xx, a timeout, a cut connection), an
    InputError for what the user must fix."""
    try:
        with open_(req, timeout) as resp, open(dest, "wb") as out:    # type: ignore[attr-defined]
            shutil.copyfileobj(resp, out, 1 << 20)
    except urllib.error.HTTPError as exc:
        refused(exc, what)
    except (TimeoutError, socket.timeout, ConnectionResetError, urllib.error.URLError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, (TimeoutError, socket.timeout, ConnectionResetError)):
            raise Retry(f"no answer in {timeout:g} s" if not isinstance(reason, ConnectionResetError) else "connection reset") from None
        if isinstance(reason, ssl.SSLError):
            raise InputError(what, "TLS failed", str(reason), "Pass the server's CA with [prometheus] ca_file") from None
        raise InputError(what, "cannot connect", str(reason), "Check the URL (host, port, http or https) and that the server is up") from None


def refused(exc: urllib.error.HTTPError, what: str) -> None:
    """An HTTP error answer: a 5xx is tried again (Retry), anything else is the user's to fix."""
    body = exc.read(ERROR_BODY_BYTES).decode("utf-8", "replace")
    try:
        message = str(json.loads(body).get("error") or body)
    except (ValueError, AttributeError):
        message = body.strip()
    message = " ".join(message.split())[:300]
    where = f"HTTP {exc.code}: {message}" if message else f"HTTP {exc.code}"
    if exc.code >= 500 or exc.code == 429:
        raise Retry(where)
    if exc.code in (401, 403):
        fix = (f"Check the credentials: {TOKEN_ENV} (bearer token) or {USER_ENV} and {PASSWORD_ENV} (basic auth), "
               "and for Mimir the X-Scope-OrgID header ([prometheus.headers])")
    elif "resolution" in message or "too many samples" in message or "max-samples" in message or exc.code == 422:
        fix = "Lower the chunk: --max-samples (points per query) or --max-points (points per series)"
    elif exc.code == 404:
        fix = "Check the URL's path: it is the part before /api/v1 (Thanos query: none; Mimir: /prometheus)"
    else:
        fix = "Check the URL and the server's logs"
    raise InputError(what, "the server refused the query", where, fix)


def check_answer(path: Path, what: str, url: str) -> None:
    """A Prometheus API success answer (JSON with status success), else a user error; an answer
    that is not JSON at all is a proxy's or another service's page."""
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES).decode("utf-8", "replace")
    compact = "".join(head.split())
    if not compact.startswith("{") or '"status":' not in compact:
        raise InputError(what, "not a Prometheus API answer", repr(head[:60]), f"Check that {url} is a Prometheus API endpoint")
    if '"status":"success"' not in compact:
        raise InputError(what, "the server answered with an error", head[:200], "Check the query's range and the server's logs")


def series_count(server: Server, metric: str, start_s: int, end_s: int, budget: Budget, scratch: Path) -> int:
    """How many series of `metric` the server holds in [start_s, end_s)."""
    dest = scratch / "series.json"
    params = [("match[]", metric), ("start", iso(start_s)), ("end", iso(end_s))]
    fetch(server, "/api/v1/series", params, dest, f"{server.url}/api/v1/series?{urllib.parse.urlencode(params)}", budget)
    try:
        with open(dest, encoding="utf-8") as fh:
            return len(json.load(fh)["data"])
    except (ValueError, KeyError, TypeError):
        raise InputError(f"{server.url}/api/v1/series", "not a Prometheus API answer", "no data list", f"Check that {server.url} is a Prometheus API endpoint") from None
    finally:
        os.unlink(dest)
