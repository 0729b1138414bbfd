"""A dcgm-exporter file with readings past their limits (telemetry_limits.csv) ingested by Spark
as by DuckDB: a 5 MW power reading and an energy counter that falls (no reset) are located
rejects with the same row, column, check and value, and the GPU-hour parts leave them out.
Before, Spark loaded both readings. The file comes with a clean one, so the two are first
staged as one batch, which sends the file back to its own staging."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import pipelines.spark.ingest as spark_ingest
from pipelines.cli import main
from pipelines.spark.storage import SparkStore, duck_shapes
from pipelines.warehouse import connect
from tests.conftest import ingest_json
from tests.telemetry_fixtures import stable, write_prom_text
from tests.test_telemetry_plausibility import as_h100, h100

SAME = ("kind", "rows_read", "rows_loaded", "rows_rejected", "status", "totals")
REJECT = ("row_number", "column_name", "check_name", "value")


def past_limits(path: Path) -> Path:
    """An H100's trace with one power reading of 5 MW and one energy reading fallen below the
    counter's first (by far more than a reset can leave)."""
    lines = as_h100(write_prom_text(path, [h100([600.0] * 40)])).read_text().splitlines()
    power = [i for i, ln in enumerate(lines) if ln.startswith("DCGM_FI_DEV_POWER_USAGE")]
    energy = [i for i, ln in enumerate(lines) if ln.startswith("DCGM_FI_DEV_TOTAL_ENERGY")]
    lines[power[20]] = lines[power[20]].replace("600.000", "5000000.000")
    head, _, ts = lines[energy[30]].rsplit(" ", 2)
    lines[energy[30]] = f"{head} {int(lines[energy[0]].rsplit(' ', 2)[1]) - 10**9} {ts}"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_spark_rejects_the_readings_duckdb_rejects(spark, tmp_path, monkeypatch):
    batches = []
    stage = spark_ingest.stage_prom_batch

    def counted(*args):
        batches.append(stage(*args))
        return batches[-1]
    monkeypatch.setattr(spark_ingest, "stage_prom_batch", counted)
    files = [past_limits(tmp_path / "a-past-limits.prom"), write_prom_text(tmp_path / "b-clean.prom", [h100([300.0] * 40)])]
    duck = ingest_json(tmp_path / "wh.duckdb", *files)["files"]
    res = CliRunner().invoke(main, ["ingest", *map(str, files), "--json", "--engine", "spark",
                                    "--spark-warehouse", str(tmp_path / "spark-warehouse")])
    assert res.exit_code == 0, res.output + repr(res.exception)
    on_spark = json.loads(res.stdout)["files"]
    assert batches == [None]      # the batch met the readings and went back to file by file
    assert [{k: f.get(k) for k in SAME} for f in on_spark] == [{k: f.get(k) for k in SAME} for f in duck]
    assert duck[0]["rows_rejected"] == 2
    store = SparkStore(spark, str(tmp_path / "spark-warehouse"))
    con = connect(tmp_path / "wh.duckdb")
    duck_rejects = sorted(con.execute(f"select {', '.join(REJECT)} from rejects").fetchall())
    assert {r[2] for r in duck_rejects} == {"plausible_power", "plausible_energy_reset"}
    assert sorted(tuple(r) for r in store._read("lineage", "rejects").select(*REJECT).collect()) == duck_rejects
    cols = [c for c, _ in duck_shapes()["gpu_hour_parts"] if c != "file_id"]
    duck_parts = sorted((tuple(stable(v) for v in r) for r in con.execute(f"select {', '.join(cols)} from gpu_hour_parts").fetchall()),
                        key=repr)
    con.close()
    spark_parts = sorted((tuple(stable(v) for v in r) for r in store._read("facts", "gpu_hour_parts").select(*cols).collect()), key=repr)
    assert duck_parts and spark_parts == duck_parts
