"""The pull's pure parts (URLs, credentials, chunk planning, lineage names) and what a server
the real one cannot be made to be does to it (5xx, silence, another service's page), through a
small local HTTP stub."""
from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from pipelines.config import load_config
from pipelines.prometheus_ingest import Pull, make_pull, pull, pull_range
from pipelines.warehouse import connect
from sources.prometheus_pull import (
    HOUR_S,
    Budget,
    Chunk,
    Server,
    auth_headers,
    chunk_of,
    fetch,
    loaded_hours,
    plan,
    server_url,
    window_hours,
)
from tests.test_prometheus_server import write_exporter_text
from tests.wh_state import snapshot

BUDGET = Budget(max_points=11000, max_samples=50_000_000, retries=2, backoff_s=0.0)
OCT_1 = 1790812800     # 2026-10-01T00:00:00Z


def test_prometheus_urls_become_http_and_credentials_in_them_are_refused():
    assert server_url("prometheus://prom:9090/") == "http://prom:9090"
    assert server_url("https://mimir.example/prometheus") == "https://mimir.example/prometheus"
    with pytest.raises(InputError, match="MB_PROMETHEUS_PASSWORD") as e:
        server_url("https://alice:hunter2@prom.example:9090")
    assert "hunter2" not in str(e.value)
    with pytest.raises(InputError, match="not a Prometheus URL"):
        server_url("ftp://prom:9090")


def test_credentials_come_from_the_environment_or_a_file(tmp_path):
    assert auth_headers({"MB_PROMETHEUS_TOKEN": "t0k"}) == [("Authorization", "Bearer t0k")]
    (tmp_path / "token").write_text("from-file\n")
    assert auth_headers({}, token_file=str(tmp_path / "token")) == [("Authorization", "Bearer from-file")]
    assert auth_headers({"MB_PROMETHEUS_USER": "alice", "MB_PROMETHEUS_PASSWORD": "pw"}) == [("Authorization", "Basic YWxpY2U6cHc=")]
    assert auth_headers({}) == []


def test_a_chunk_stays_within_the_points_and_samples_budget():
    assert window_hours(1, 30, BUDGET) == 11000 // 120          # points per series decide
    assert window_hours(10_000, 30, BUDGET) == 50_000_000 // (120 * 10_000)
    assert window_hours(1_000_000, 30, BUDGET) == 0            # not even one hour: the caller says so


def test_a_chunk_ends_a_step_before_the_next_begins_and_its_name_gives_it_back():
    c = Chunk('{__name__=~"A|B"}', OCT_1, OCT_1 + 2 * HOUR_S, 30.0)
    assert dict(c.params())["end"] == "2026-10-01T01:59:30Z"
    name = c.name("http://prom:9090")
    assert chunk_of(name, "http://prom:9090") == c and chunk_of(name, "http://other:9090") is None
    assert loaded_hours([name], "http://prom:9090") == {OCT_1 // HOUR_S, OCT_1 // HOUR_S + 1}


@given(st.integers(1, 72), st.sets(st.integers(0, 71)), st.integers(1, 30))
def test_plan_covers_each_missing_hour_once_and_no_loaded_hour(hours, loaded_offsets, per_chunk):
    base = OCT_1 // HOUR_S
    loaded = {base + o for o in loaded_offsets}
    chunks = plan("q", OCT_1, OCT_1 + hours * HOUR_S, 60.0, per_chunk, loaded)
    covered = [h for c in chunks for h in range(c.start_s // HOUR_S, c.end_s // HOUR_S)]
    assert len(covered) == len(set(covered))
    assert set(covered) == {base + o for o in range(hours)} - loaded
    assert all(0 < (c.end_s - c.start_s) // HOUR_S <= per_chunk for c in chunks)


def test_a_range_ends_at_the_last_settled_hour():
    from datetime import datetime, timezone
    now = datetime(2026, 10, 1, 5, 30, tzinfo=timezone.utc)
    assert pull_range("2026-10", None, None, now) == (OCT_1, OCT_1 + 5 * HOUR_S)
    # an hour that ended moments ago may still lack its last scrapes: the next pull takes it
    assert pull_range("2026-10", None, None, now.replace(minute=5)) == (OCT_1, OCT_1 + 4 * HOUR_S)
    with pytest.raises(InputError, match="either --month or --from"):
        pull_range("2026-10", "2026-10-01T00:00:00Z", None, now)


# ---- a stub server -------------------------------------------------------------------------

class Stub:
    """Answers each GET with `answer(path) -> (status, body)`, and keeps the requests' headers."""

    def __init__(self, answer: Callable[[str], tuple[int, str]]) -> None:
        self.answer, self.requests = answer, []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:     # noqa: N802 (http.server's name)
                stub.requests.append((self.path, self.headers))
                status, body = stub.answer(self.path)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def stub():
    made: list[Stub] = []

    def make(answer: Callable[[str], tuple[int, str]]) -> Stub:
        made.append(Stub(answer))
        return made[-1]
    yield make
    for s in made:
        s.close()


SERIES_OK = json.dumps({"status": "success", "data": [{"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": "0"}]})


def test_a_5xx_is_tried_again_with_growing_waits_then_is_one_error(stub, tmp_path):
    s = stub(lambda path: (503, '{"status":"error","error":"overloaded"}'))
    waits: list[float] = []
    with pytest.raises(InputError) as e:
        fetch(Server(s.url), "/api/v1/query_range", [], tmp_path / "a.json", "chunk X", Budget(1, 1, 3, 0.5), waits.append)
    assert len(s.requests) == 4 and waits == [0.5, 1.0, 2.0]
    assert str(e.value).startswith("chunk X: no good answer in 4 tries") and "HTTP 503: overloaded" in str(e.value)


def test_a_5xx_that_passes_is_not_an_error_and_headers_are_sent(stub, tmp_path):
    answers = iter([(502, "bad gateway"), (200, SERIES_OK)])
    s = stub(lambda path: next(answers))
    server = Server(s.url, (("X-Scope-OrgID", "fleet"), ("Authorization", "Bearer t")))
    fetch(server, "/api/v1/series", [], tmp_path / "a.json", "series", BUDGET, lambda _: None)
    assert json.loads((tmp_path / "a.json").read_text())["status"] == "success"
    assert s.requests[-1][1]["X-Scope-OrgID"] == "fleet" and s.requests[-1][1]["Authorization"] == "Bearer t"


def test_another_services_page_is_not_a_prometheus_answer(stub, tmp_path):
    s = stub(lambda path: (200, "<html>Sign in</html>"))
    with pytest.raises(InputError, match="not a Prometheus API answer"):
        fetch(Server(s.url), "/api/v1/series", [], tmp_path / "a.json", "series", BUDGET)


def test_silence_is_a_timeout_and_a_closed_port_a_wrong_url(tmp_path):
    with socket.socket() as quiet:        # accepts connections, never answers
        quiet.bind(("127.0.0.1", 0))
        quiet.listen(8)
        url = f"http://127.0.0.1:{quiet.getsockname()[1]}"
        with pytest.raises(InputError, match="no good answer in 2 tries.*no answer in 0.2 s"):
            fetch(Server(url, timeout_s=0.2), "/api/v1/series", [], tmp_path / "a.json", "series", Budget(1, 1, 1, 0.0))
    with pytest.raises(InputError, match="cannot connect.*Check the URL"):
        fetch(Server(url), "/api/v1/series", [], tmp_path / "a.json", "series", BUDGET)


def test_a_pull_whose_chunk_keeps_failing_leaves_the_warehouse_as_it_was(stub, tmp_path):
    def answer(path: str) -> tuple[int, str]:
        if path.startswith("/api/v1/series"):
            return 200, SERIES_OK
        if "2026-10-01T00" in path:        # the first chunk loads, the second fails
            return 200, json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
                {"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": "0", "UUID": "GPU-1"}, "values": [[OCT_1, "300"]]}]}})
        return 500, "boom"
    s = stub(answer)
    wh = tmp_path / "wh.duckdb"
    con = connect(wh)
    from pipelines.ingest import ingest
    ingest(con, [write_exporter_text(tmp_path / "october.prom")])
    con.close()
    before = snapshot(wh)
    con = connect(wh)
    try:
        out = pull(con, Pull(Server(s.url), OCT_1, OCT_1 + 2 * HOUR_S, 60.0, Budget(60, 1000, 1, 0.0)))
    finally:
        con.close()
    assert [r.status for r in out] == ["rolled back", "failed"]
    assert "HTTP 500" in str(out[-1].error)     # type: ignore[union-attr]
    assert snapshot(wh) == before
    assert not list(Path(tmp_path).glob(".meterbook-pull-*"))


def test_prometheus_section_and_environment_make_the_pull_and_no_secret_is_recorded(stub, tmp_path):
    matrix = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": "0", "UUID": "GPU-1"}, "values": [[OCT_1, "300"]]}]}})
    s = stub(lambda path: (200, SERIES_OK if path.startswith("/api/v1/series") else matrix))
    toml = tmp_path / "meterbook.toml"
    toml.write_text(f'[telemetry]\ninterval_s = 60\n[prometheus]\nurl = "{s.url}"\nmax_samples = 60\n'
                    '[prometheus.headers]\n"X-Scope-OrgID" = "fleet"\n')
    p = make_pull(s.url, load_config(toml), None, "2026-10-01T00:00:00Z", "2026-10-01T02:00:00Z",
                  env={"MB_PROMETHEUS_TOKEN": "s3cret-token"})
    assert p.step_s == 60 and p.budget.max_samples == 60
    con = connect(tmp_path / "wh.duckdb")
    try:
        out = pull(con, p)
        stored = con.execute("select string_agg(path || sha256 || totals, ' ') from source_files").fetchone()[0]
    finally:
        con.close()
    assert [r.status for r in out] == ["loaded", "loaded"]      # 60 points a query: one hour a chunk
    assert all(r[1].get("X-Scope-OrgID") == "fleet" and r[1].get("Authorization") == "Bearer s3cret-token" for r in s.requests)
    assert "s3cret" not in stored


def test_a_month_without_a_server_is_one_error_line(tmp_path):
    from click.testing import CliRunner

    from pipelines.cli import main
    res = CliRunner().invoke(main, ["ingest", "--month", "2026-10", "--warehouse", str(tmp_path / "wh.duckdb"),
                                    "--config", str(write_config(tmp_path))])
    assert res.exit_code == 1 and res.stderr.startswith("Error: --month: is for a Prometheus pull"), res.stderr
    assert not (tmp_path / "wh.duckdb").exists()


def write_config(folder: Path) -> Path:
    (folder / "meterbook.toml").write_text("[telemetry]\ninterval_s = 60\n")
    return folder / "meterbook.toml"
