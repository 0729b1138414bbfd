"""Many small dcgm-exporter files on Spark staged as one batch (pipelines.spark.ingest.ingest_batch)
load what each file's own ingest loads: per file the same rows read, loaded and rejected, totals
and GPU-hour and pod parts; a batch holding a file with a reject goes back to file by file, with
the same located rejects."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import pipelines.spark.ingest as spark_ingest
from pipelines.config import Config
from pipelines.spark.storage import SparkStore
from tests.test_telemetry_batch import ODD_LINES, sample

FILES = 5
SAME = ("kind", "format_version", "rows_read", "rows_loaded", "rows_rejected", "status")


def bodies(odd: bool) -> list[list[Any]]:
    """FILES hourly dumps of a few GPUs, files sharing GPUs and hours; `odd`: three, one holding a
    bad value (each file is then ingested alone twice: fewer keep the test short)."""
    out: list[list[Any]] = [[(s, 3 * i + k) for s in range(4) for k in range(3)] for i in range(3 if odd else FILES)]
    if odd:
        out[1].insert(2, 0)
    return out


def write(folder: Path, odd: bool) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for i, body in enumerate(bodies(odd)):
        path = folder / f"host-a-{i:03d}.prom"
        path.write_text("\n".join(sample(*b) if isinstance(b, tuple) else ODD_LINES[b] for b in body) + "\n")
        paths.append(path)
    return paths


def ingested(spark, root: Path, odd: bool, batched: bool, monkeypatch) -> tuple[dict[str, Any], int]:
    """What one Spark ingest of the files wrote, by file name (ids may differ), and batches loaded."""
    paths = write(root / "in", odd)
    batches = []
    stage = spark_ingest.stage_prom_batch

    def counted(*args: Any) -> Any:
        out = stage(*args)
        batches.append(out is not None)
        return out
    monkeypatch.setattr(spark_ingest, "stage_prom_batch", counted)
    monkeypatch.setattr(spark_ingest, "BATCHED_ON_SPARK", {"dcgm-prom"} if batched else set())
    store = SparkStore(spark, str(root / "warehouse"))
    results = spark_ingest.ingest(spark, store, paths, "auto", {}, Config())
    assert [r.status for r in results] == ["loaded"] * len(paths)
    files = {r["file_id"]: Path(r["path"]).name for r in store.source_files().collect()}
    got: dict[str, Any] = {"files": {files[r["file_id"]]: ({k: r[k] for k in SAME}, r["totals"])
                                     for r in store.source_files().collect()}}
    for table in ("gpu_hour_parts", "gpu_pod_parts", "rejects"):
        kind = "lineage" if table == "rejects" else "facts"
        df = store._read(kind, table)
        cols = [c for c in df.columns if c != "file_id"]
        got[table] = sorted((files[r["file_id"]], *[r[c] for c in cols]) for r in df.collect())
    return got, sum(batches)


def same_totals(a: str, b: str) -> bool:
    import json
    x, y = json.loads(a), json.loads(b)
    return x.keys() == y.keys() and all(math.isclose(x[k], y[k], rel_tol=1e-12) if isinstance(x[k], float) else x[k] == y[k]
                                        for k in x)


@pytest.mark.parametrize("odd", [False, True], ids=["all clean", "one bad value"])
def test_small_files_in_one_batch_load_what_each_loads_alone(spark, tmp_path, monkeypatch, odd):
    alone, none = ingested(spark, tmp_path / "alone", odd, False, monkeypatch)
    batched, batches = ingested(spark, tmp_path / "batched", odd, True, monkeypatch)
    assert none == 0
    assert batches == (0 if odd else 1)      # a reject is each file's own staging's
    assert alone["gpu_hour_parts"], "no parts: the comparison would prove nothing"
    for table in ("gpu_hour_parts", "gpu_pod_parts", "rejects"):
        assert batched[table] == alone[table], table
    assert bool(alone["rejects"]) == odd
    assert alone["files"].keys() == batched["files"].keys()
    for name, (counts, totals) in alone["files"].items():
        assert batched["files"][name][0] == counts, name
        assert same_totals(batched["files"][name][1], totals), (name, totals, batched["files"][name][1])
