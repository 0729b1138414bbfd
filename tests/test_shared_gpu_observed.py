"""A GPU shared by pods at once is read at the same scrapes in every pod's series: its observed
time counts each scrape once. dcgm-exporter repeats a time-sliced GPU's series per pod (with
--kubernetes-virtual-gpus, a vgpu label each); pods that take the GPU in turn add up."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from pipelines.config import Config
from pipelines.stages import run_stages
from pipelines.warehouse import connect
from tests.conftest import ingest_json
from tests.telemetry_fixtures import LABELS, ms

START = datetime(2026, 10, 6, 0, 0, 10)
UUID = "GPU-77777777-2222-3333-4444-555555555555"
INTERVAL_S = 30
HALF_HOUR_GAP = set(range(150, 210))        # scrapes 150-209: 01:15-01:45, half of hour 1


def write_pods(path, pods: dict[str, tuple[range, str]], drop: set[int]):
    """One GPU's power gauge (no energy counter: its energy is power x observed time), a series
    per pod over the pod's scrapes; `pods` maps a pod to (its scrape indexes, extra labels)."""
    device = LABELS.format(i=0, uuid=UUID, bus=16)
    lines = ["# TYPE DCGM_FI_DEV_POWER_USAGE gauge"]
    for pod, (scrapes, extra) in pods.items():
        for k in scrapes:
            if k not in drop:
                t = START + timedelta(seconds=k * INTERVAL_S)
                lines.append(f'DCGM_FI_DEV_POWER_USAGE{{{device},namespace="ns-{pod}",pod="{pod}"{extra}}} '
                             f'{250 + k % 7:.3f} {ms(t)}')
    path.write_text("\n".join(lines) + "\n")
    return path


def hours(tmp_path, pods: dict[str, tuple[range, str]], drop: set[int] = frozenset()) -> dict[int, tuple]:
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, write_pods(tmp_path / "shared.prom", pods, drop))
    con = connect(wh)
    run_stages(con, Config(interval_s=INTERVAL_S))
    got = con.execute("select hour(hour_start), coverage, has_gap, gap_s from int_gpu_hours where gpu_uuid = ? "
                      "order by hour_start", [UUID]).fetchall()
    con.close()
    return {h: rest for h, *rest in got}


def test_time_sliced_pods_count_each_scrape_once_and_show_a_gap(tmp_path):
    three = {f"p{k}": (range(360), f',vgpu="{k}"') for k in range(3)}
    got = hours(tmp_path, three, HALF_HOUR_GAP)
    assert got[0][0] == pytest.approx(1.0) and got[2][0] == pytest.approx(1.0)
    coverage, has_gap, gap_s = got[1]
    assert coverage == pytest.approx(0.5, abs=0.01)           # three series of 60 readings: 60 scrapes, not 180
    assert has_gap and gap_s == pytest.approx(1800, abs=31)


def test_pods_overlapping_without_vgpu_labels_count_each_scrape_once(tmp_path):
    # pod b starts half an hour into hour 0 and outlives pod a: they share hours 0 and 1
    staggered = {"a": (range(0, 240), ""), "b": (range(60, 360), "")}
    got = hours(tmp_path, staggered, HALF_HOUR_GAP)
    assert got[0][0] == pytest.approx(1.0)                    # 120 + 60 readings, 120 scrapes
    assert got[1][0] == pytest.approx(0.5, abs=0.01) and got[1][1]


def test_pods_in_turn_add_up(tmp_path):
    # pod a has the GPU for the first 90 minutes, pod b for the next 90
    in_turn = {"a": (range(0, 180), ""), "b": (range(180, 360), "")}
    got = hours(tmp_path, in_turn)
    assert [round(c, 3) for c, _, _ in got.values()] == [1.0, 1.0, 1.0]
    assert not any(g for _, g, _ in got.values())


def test_spark_counts_a_shared_gpus_scrapes_as_duckdb_does(spark, tmp_path):
    """The same staging model on Spark: its window over series (a range frame on two keys, ties
    sharing a run) gives each GPU-hour DuckDB's count of scrapes."""
    import pipelines.spark.ingest as spark_ingest
    from pipelines.spark.storage import SparkStore
    pods = {f"p{k}": (range(360), f',vgpu="{k}"') for k in range(3)} | {"a": (range(0, 240), ""), "b": (range(60, 360), "")}
    path = write_pods(tmp_path / "shared.prom", pods, HALF_HOUR_GAP)
    wh = tmp_path / "wh.duckdb"
    ingest_json(wh, path)
    con = connect(wh)
    duck = con.execute("select hour(hour_start), n_scrapes from gpu_hour_parts order by 1").fetchall()
    con.close()
    store = SparkStore(spark, str(tmp_path / "spark"))
    assert [r.status for r in spark_ingest.ingest(spark, store, [path], "auto", {}, Config())] == ["loaded"]
    ours = sorted((r["hour_start"].hour, r["n_scrapes"]) for r in store._read("facts", "gpu_hour_parts").collect())
    assert ours == duck == [(0, 120), (1, 60), (2, 120)]
