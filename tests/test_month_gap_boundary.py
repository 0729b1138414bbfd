"""A GPU whose readings stop before a month ends and resume in the next: the hours of the gap
take the workload shares of the last hour observed before it (int_gpu_hours' share_hour), an
hour of the month before. A build of the later month alone must attribute them as a build of
every month does. History as the months benchmark makes it: the demo month's rows copied into
the month before (the demo's telemetry runs from the 6th to the 28th, the same GPUs)."""
from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from benchmarks.bench_months import add_history, restate
from tests.pdf_helpers import cli

INPUTS = ("billing", "dcgm", "invoices", "work")


def build(wh, config) -> dict:
    out = cli("build", "--json", "--warehouse", str(wh), "--config", str(config))
    return json.loads(out.strip().splitlines()[-1])


def october(wh) -> dict[str, list]:
    with duckdb.connect(str(wh), read_only=True) as con:
        return {t: con.execute(f"select * from {t} where month = '2026-10' order by all").fetchall()
                for t in ("host_workload_hours", "team_month", "workload_month")}


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory):
    root = tmp_path_factory.mktemp("gap")
    demo = root / "demo"
    cli("demo", "--month", "2026-10", "--out", str(demo), "--interval", "300")
    config = demo / "meterbook.toml"
    wh = root / "wh.duckdb"
    cli("ingest", *(str(demo / d) for d in INPUTS), "--warehouse", str(wh))
    add_history(wh, 2)
    build(wh, config)
    focus = next((demo / "billing").glob("focus*.csv"))
    restate(focus)
    cli("ingest", str(focus), "--warehouse", str(wh))
    fresh = root / "fresh.duckdb"
    shutil.copy(wh, fresh)
    with duckdb.connect(str(fresh)) as con:
        con.execute("delete from build_months")   # no state: every month built
    return build(wh, config), build(fresh, config), wh, fresh


def test_the_later_month_alone_attributes_the_gap_as_a_full_build(warehouses):
    incremental, full, wh, fresh = warehouses
    assert incremental["rebuilt"] == ["2026-10"] and full["rebuilt"] == ["2026-09", "2026-10"]
    got, want = october(wh), october(fresh)
    with duckdb.connect(str(fresh), read_only=True) as con:   # the gap reaches October's first hours
        assert con.execute("select min(hour_start) from host_workload_hours where month = '2026-10'").fetchone()[0].day == 1
    assert got == want
