"""A build rebuilds only the months whose inputs changed.

Three demo months are loaded and built; then September changes twice over, as it does in
practice: its FOCUS delivery is restated (the same file, one cost corrected) and a late
telemetry file lands in it (a host scraped on September 6 that the first load missed). The next
build rebuilds September alone: August's and October's rows of every model are the rows they
were, and October's only change is team_month's comparison with September. A warehouse loaded
with the final files and built once holds the same figures."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from benchmarks.bench_months import restate
from pipelines.month_scope import AFTER, PREVIOUS_MONTH_TABLES, UNDATED, month_of
from pipelines.stages import stages
from tests.pdf_helpers import cli

MONTHS = ("2026-08", "2026-09", "2026-10")
INPUTS = ("billing", "dcgm", "codecarbon", "invoices", "work")
PREVIOUS_MONTH_COLUMNS = ("billed_cost_prev_month", "billed_cost_change", "effective_cost_change", "facility_energy_kwh_change")
LATE_HOST = "ip-10-0-9-99"


def build(wh: Path, config: Path) -> dict:
    out = cli("build", "--json", "--warehouse", str(wh), "--config", str(config))
    return json.loads(out.strip().splitlines()[-1])   # the ticker shares the runner's output


def ingest(wh: Path, *paths: Path) -> None:
    cli("ingest", *(str(p) for p in paths), "--warehouse", str(wh))


def dated_models() -> list[str]:
    return [m.name for m in stages() if m.name not in UNDATED]


def month_rows(wh: Path, month: str, skip: tuple[str, ...] = ()) -> dict[str, list]:
    """Every dated model's rows of a month, exactly as stored (the previous-month tables less `skip`)."""
    out = {}
    with duckdb.connect(str(wh), read_only=True) as con:
        for model in dated_models():
            cols = "* exclude (" + ", ".join(skip) + ")" if model in PREVIOUS_MONTH_TABLES and skip else "*"
            out[model] = con.execute(f"select {cols} from {model} where {month_of(model)} = ? order by all", [month]).fetchall()
    return out


def late_scrapes(dcgm: Path, out: Path) -> Path:
    """A host the first load missed: one of September's scrape files under another host and GPU
    serial, so its GPUs appear in September alone."""
    src = sorted(p for p in dcgm.rglob("*.prom"))[0]
    text = src.read_text(encoding="utf-8").replace(src.parent.name, LATE_HOST).replace('UUID="GPU-', 'UUID="GPU-99')
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{LATE_HOST}_{src.name.split('_', 1)[1]}"
    target.write_text(text, encoding="utf-8")
    return target


def _billed(wh: Path, month: str) -> list:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute("select billed_cost from team_month where month = ?", [month]).fetchall()


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("incremental")
    demos = {m: root / "demo" / m for m in MONTHS}
    for month, path in demos.items():
        # scraped every 5 min (the demo's default is 30 s): an incremental build is compared with
        # one from scratch of the same files, which the samples' density does not change
        cli("demo", "--month", month, "--out", str(path), "--interval", "300")
    config = demos["2026-10"] / "meterbook.toml"
    wh = root / "incremental.duckdb"
    for month in MONTHS:
        ingest(wh, *(demos[month] / d for d in INPUTS))
    # the warehouse built from scratch starts from these loads, never built: a copy holds the
    # same files, ids and load order without ingesting the three months again
    fresh = root / "fresh.duckdb"
    shutil.copy(wh, fresh)
    first = build(wh, config)
    before = {m: month_rows(wh, m, PREVIOUS_MONTH_COLUMNS) for m in MONTHS}
    exact_before = {m: month_rows(wh, m) for m in MONTHS}
    billed_before = _billed(wh, "2026-09")
    focus = next((demos["2026-09"] / "billing").glob("focus*.csv"))
    restate(focus, usd=1)
    late = late_scrapes(demos["2026-09"] / "dcgm", root / "late" / "dcgm")
    ingest(wh, focus, late)
    second = build(wh, config)
    third = build(wh, config)
    ingest(fresh, focus, late)
    build(fresh, config)
    return {"wh": wh, "fresh": fresh, "first": first, "second": second, "third": third, "before": before,
            "exact_before": exact_before, "billed_before": billed_before}


def test_first_build_builds_every_month(warehouses):
    assert warehouses["first"]["full"] and warehouses["first"]["rebuilt"] == list(MONTHS)


def test_a_changed_month_is_the_only_one_rebuilt(warehouses):
    second = warehouses["second"]
    assert second["rebuilt"] == ["2026-09"] and not second["full"]
    # the models ran over September's rows alone; October's comparison with September moved
    assert second["previous_month_updated"] == ["2026-10"]
    assert warehouses["third"]["rebuilt"] == [] and warehouses["third"]["model_seconds"] == {}


def test_other_months_rows_are_untouched(warehouses):
    wh = warehouses["wh"]
    assert month_rows(wh, "2026-08") == warehouses["exact_before"]["2026-08"]
    assert month_rows(wh, "2026-10", PREVIOUS_MONTH_COLUMNS) == warehouses["before"]["2026-10"]
    changed, was = month_rows(wh, "2026-09"), warehouses["exact_before"]["2026-09"]
    assert sum(r[0] for r in _billed(wh, "2026-09")) == sum(r[0] for r in warehouses["billed_before"]) + 1
    assert len(changed["int_gpu_hours"]) > len(was["int_gpu_hours"])


def _rounded(rows: list) -> list:
    # doubles summed in another order differ in their last bits (team_day's daily spread)
    return sorted((tuple(float(f"{v:.10g}") if isinstance(v, float) else v for v in r) for r in rows), key=repr)


@pytest.mark.parametrize("month", MONTHS)
def test_incremental_equals_a_build_from_scratch(warehouses, month):
    got, want = month_rows(warehouses["wh"], month), month_rows(warehouses["fresh"], month)
    assert {m: _rounded(r) for m, r in got.items()} == {m: _rounded(r) for m, r in want.items()}


def test_undated_marts_follow(warehouses):
    with duckdb.connect(str(warehouses["wh"]), read_only=True) as a, duckdb.connect(str(warehouses["fresh"]), read_only=True) as b:
        for model in sorted(AFTER):
            assert a.execute(f"select * from {model} order by all").fetchall() == b.execute(f"select * from {model} order by all").fetchall()


def test_copied_warehouse_keeps_its_state(warehouses, tmp_path):
    """The months' fingerprints travel with the warehouse file: a copy builds nothing again."""
    copy = tmp_path / "copy.duckdb"
    shutil.copy(warehouses["wh"], copy)
    with duckdb.connect(str(copy), read_only=True) as con:
        config = Path(con.execute("select config_path from build_config").fetchone()[0])
    assert build(copy, config)["rebuilt"] == []


def test_every_model_is_kept_by_month_or_declared_undated(warehouses):
    """A model the month scope cannot place (no month column, no MONTH_OF, not UNDATED) fails
    the incremental build: each new model must say which month its rows belong to."""
    import duckdb

    from pipelines.month_scope import MONTH_OF
    with duckdb.connect(str(warehouses["wh"]), read_only=True) as con:
        columns = {m: {r[0] for r in con.execute("select column_name from duckdb_columns() where table_name = ?",
                                                  [m]).fetchall()} for m in dated_models()}
    assert not [m for m, cols in columns.items() if "month" not in cols and m not in MONTH_OF]


def test_every_loaded_table_says_which_months_read_it():
    """A table the ingest loads but the month scope does not know is read whole by every build
    and is in no month's fingerprint: a file landing in it would rebuild nothing."""
    import re

    from core.sql import sql_files, sql_text
    from pipelines import month_scope as ms
    created = {t for f in sql_files("00_warehouse")
               for t in re.findall(r"create table if not exists (\w+)", sql_text("00_warehouse", f))}
    declared = {*ms.MONTH_EXPR, *ms.BILLING_FILE_TABLES, *ms.ROW_MONTHS, *ms.UNDATED_INPUTS, *ms.LEDGER_TABLES}
    assert created - declared == set()
