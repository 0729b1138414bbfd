"""The config a warehouse was built with is part of it: a report or export run without --config
states the figures of the last build, never the defaults by surprise."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main

MONTH = "2026-10"


def _run(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output + repr(res.exception)
    return res.stdout


@pytest.fixture(scope="module")
def built(demo_billing, tmp_path_factory) -> tuple[Path, Path]:
    """A copy of the demo warehouse, built once with the demo's config."""
    root = tmp_path_factory.mktemp("build_config")
    wh = root / "wh.duckdb"
    shutil.copy(demo_billing / "wh.duckdb", wh)
    config = demo_billing / "demo" / "meterbook.toml"
    _run("ingest", str(demo_billing / "demo" / "work"), "--warehouse", str(wh))
    _run("build", "--warehouse", str(wh), "--config", str(config))
    return wh, config


def _outputs(wh: Path, out: Path, config: list[str]) -> dict[str, str]:
    """What each reader writes or prints, as text, run with the given --config arguments."""
    common = ["--month", MONTH, "--warehouse", str(wh), *config]
    _run("export", "focus", *common, "--out", str(out / "focus"))
    _run("export", "allocation", *common, "--out", str(out))
    _run("export", "jobs", *common, "--out", str(out / "jobs"))
    _run("report", "chargeback", *common, "--out", str(out / "report"))
    whatif = _run("whatif", *common, "--json")
    return {"focus": (out / "focus.csv").read_text(), "allocation": (out / f"allocation-{MONTH}.csv").read_text(),
            "jobs": (out / "jobs.csv").read_text(), "chargeback": (out / "report" / "chargeback.csv").read_text(),
            "whatif": whatif}


def test_readers_without_config_state_the_figures_of_the_recorded_build(built, tmp_path):
    wh, config = built
    with_config = _outputs(wh, tmp_path / "with", ["--config", str(config)])
    without = _outputs(wh, tmp_path / "without", [])
    for name, text in with_config.items():
        assert without[name] == text, f"{name} differs without --config"


def test_the_build_records_its_config_hash_and_text(built):
    wh, config = built
    with duckdb.connect(str(wh), read_only=True) as con:
        sha, path, text = con.execute("select config_sha256, config_path, config_text from build_config").fetchone()
    import hashlib
    assert sha == hashlib.sha256(config.read_bytes()).hexdigest()
    assert path == str(config) and text == config.read_text(encoding="utf-8")


def test_a_warehouse_never_built_uses_the_defaults_and_says_so_once(demo_billing, tmp_path):
    wh = tmp_path / "wh.duckdb"
    shutil.copy(demo_billing / "wh.duckdb", wh)
    with duckdb.connect(str(wh)) as con:
        con.execute("drop table if exists build_config")
    res = CliRunner().invoke(main, ["export", "focus", "--month", MONTH, "--warehouse", str(wh), "--out", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    assert res.stderr.count("the defaults were used") == 1
