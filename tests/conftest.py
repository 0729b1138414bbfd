"""Shared fixtures: a fresh warehouse per test, the real samples in ../shared, a CLI runner."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SAMPLES = SHARED / "samples"
DATA = Path(__file__).parent / "data"


@pytest.fixture
def samples() -> Path:
    """The real public sample files. Absent only outside CI; in CI their absence is a failure."""
    if not SAMPLES.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{SAMPLES} is missing: CI must run with ../shared beside the clone")
        pytest.skip(f"{SAMPLES} not present (run with ../shared beside the checkout)")
    return SAMPLES


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    return tmp_path / "wh.duckdb"


def run_cli(*args: str) -> tuple[int, str, str]:
    """The installed CLI in a real process: exit code, stdout, stderr (to see tracebacks)."""
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", *args], capture_output=True, text=True, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


def ingest_json(warehouse: Path, *paths: Path | str, kind: str = "auto") -> dict:
    res = CliRunner().invoke(main, ["ingest", *map(str, paths), "--warehouse", str(warehouse), "--json", "--kind", kind])
    assert res.exit_code == 0, res.output + repr(res.exception)
    return json.loads(res.stdout)


# --- golden files (reports) ---------------------------------------------------------------
GOLDEN = Path(__file__).parent / "golden"


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="Rewrite tests/golden/* from the current output instead of comparing to it.")


@pytest.fixture
def golden(request):
    """golden(name, text): compare text to tests/golden/<name>, or write it with --update-golden."""
    update = request.config.getoption("--update-golden")

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if update or not path.exists():
            if not update:
                pytest.fail(f"{path} missing: run pytest with --update-golden to create it, then review it")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert text == path.read_text(encoding="utf-8"), f"{name} differs from the golden file; if intended, rerun with --update-golden"
    return check


# --- one demo month for the export tests ----------------------------------------------------
@pytest.fixture(scope="session")
def demo_billing(tmp_path_factory) -> Path:
    """The demo month's billing and telemetry ingested once per session: <root>/wh.duckdb, its
    inputs in <root>/demo (config <root>/demo/meterbook.toml). Readers run exports into their
    own folders; the build step they trigger rewrites the same marts from the same inputs."""
    root = tmp_path_factory.mktemp("demo_billing")
    run = CliRunner()
    for args in (["demo", "--out", str(root / "demo")],
                 ["ingest", str(root / "demo" / "billing"), str(root / "demo" / "dcgm"), "--warehouse", str(root / "wh.duckdb")]):
        res = run.invoke(main, args)
        assert res.exit_code == 0, res.output + repr(res.exception)
    return root


# --- the demo month's chargeback, shared by the report tests (one build per session) ----------
SCRIPT_TEAM = "<script>alert(1)</script>"


@pytest.fixture(scope="session")
def chargeback_demo(tmp_path_factory) -> dict:
    """The demo month with one team tag replaced by a script, ingested and reported with --per-team."""
    from tests.pdf_helpers import cli
    root = tmp_path_factory.mktemp("reports")
    d, wh, out = root / "demo", root / "wh.duckdb", root / "out"
    cli("demo", "--month", "2026-10", "--out", str(d))
    focus = next((d / "billing").glob("focus-*111122223333*.csv"))   # the USD account (the EUR one tags no recsys)
    focus.write_text(focus.read_text(encoding="utf-8").replace('""team"":""recsys""', f'""team"":""{SCRIPT_TEAM}""'), encoding="utf-8")
    cli("ingest", str(d / "billing"), str(d / "dcgm"), str(d / "codecarbon"), str(d / "disclosures"), str(d / "work"),
        "--warehouse", str(wh))
    output = cli("report", "chargeback", "--month", "2026-10", "--warehouse", str(wh), "--config", str(d / "meterbook.toml"),
                 "--out", str(out), "--per-team")
    return {"root": root, "wh": wh, "out": out, "config": d / "meterbook.toml", "output": output}


# --- Spark (tests/test_spark*.py) -------------------------------------------------------------
# The tests' data are a few thousand rows, and a fresh JVM spends more CPU compiling than running
# them: Spark's generated code for every query (whole-stage and expression codegen), its own
# classes through C2 (JIT threads took 136 of 310 CPU-seconds of the equality test), and AQE
# re-planning every stage. Interpreted expressions, the C1 compiler only (a code cache it does
# not fill) and a plan made once cut that by a third; results do not depend on any of them.
# `make bench BENCH=spark` runs with Spark's defaults.
SPARK_TEST_CONF = {"spark.sql.shuffle.partitions": "2", "spark.sql.codegen.wholeStage": "false",
                   "spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.adaptive.enabled": "false",
                   "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"}


@pytest.fixture(scope="session")
def spark():
    """One local[2] SparkSession for every Spark test: starting one costs 15 s or more."""
    from pipelines.spark.session import spark_session
    session = spark_session("local[2]", SPARK_TEST_CONF)
    yield session
    session.stop()


# ---- markers: `pytest -m fast` while working, `-m spark` / `-m reports` for those parts; CI runs all
# Files that start Spark, and files that render PDFs, by name; files that build whole demo months
# or run fault and fuzz suites, measured above 15 s on the CI machine. Every other test is fast.
SPARK_FILES = ("spark",)
REPORT_FILES = ("report", "audit", "statement", "chargeback", "methodology", "disclosure", "shown_figures", "golden",
                "fonts", "charts", "chart_labels", "money_stays", "end_to_end")
SLOW_FILES = frozenset("""
accepted_values_report allocation allocation_properties atomic_outputs attribution aws_split bad_inputs billing
build_config carbon codecarbon config crash_concurrency cur_lineage currency environment_errors errors export_safety
export_sets findings focus_13_14 focus_export focus_export_split fuzz hostile_input idempotency incremental_months
ingest_status invoices jobs jobs_properties layers mart_contracts month_files month_invariance month_invariance_property
nvidia_smi prometheus_server real_world reconstruct reference_data sharing slurm team_names telemetry telemetry_batch
telemetry_exposition telemetry_plausibility telemetry_prom_comments telemetry_typed_read text_parts whatif
""".split())


def pytest_configure(config):
    for name, what in (("fast", "the quick subset: no Spark, no rendered PDFs, no whole demo builds"),
                       ("spark", "starts a local Spark session"), ("reports", "renders PDF reports")):
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_collection_modifyitems(items):
    for item in items:
        stem = item.path.stem.removeprefix("test_")
        if any(s in stem for s in SPARK_FILES) or "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
        elif any(r in stem for r in REPORT_FILES) or "chargeback_demo" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.reports)
        elif stem not in SLOW_FILES:
            item.add_marker(pytest.mark.fast)
