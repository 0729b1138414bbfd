"""The real public samples go through the spine: counts balance, totals match the raw files."""
from __future__ import annotations

import duckdb
import pytest

from tests.conftest import ingest_json

FOCUS_SAMPLE = "billing/focus-1.0__focus-sample-data__focus_sample.csv"
DCGM_SAMPLE = "dcgm/dcgm-exporter-scrape__datadog-integrations-core__metrics.txt"


def test_focus_sample_totals_match_raw_billedcost(samples, warehouse):
    path = samples / FOCUS_SAMPLE
    (f,) = ingest_json(warehouse, path)["files"]
    assert f["kind"] == "focus" and f["status"] == "loaded"
    assert f["rows_read"] == 1000
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
    # Independent sum over the raw file: the literal NULL is a null.
    raw = duckdb.sql("select sum(try_cast(nullif(BilledCost, 'NULL') as decimal(38, 12))) from read_csv(?, all_varchar = true)",
                     params=[str(path)]).fetchall()[0][0]
    assert round(f["totals"]["billed_cost"], 2) == round(float(raw), 2)
    assert f["totals"]["currency"] == "USD"


def test_dcgm_sample_loads_gpus_and_rejects_unlabelled_dummies(samples, warehouse):
    (f,) = ingest_json(warehouse, samples / DCGM_SAMPLE, "--scrape-time", "2024-05-01T12:00:00Z")["files"]
    assert f["kind"] == "dcgm-prom"
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
    assert f["rows_rejected"] > 0
    con = duckdb.connect(str(warehouse), read_only=True)
    checks = {r[0] for r in con.execute("select distinct check_name from rejects").fetchall()}
    assert "gpu_labels_present" in checks
    models = {r[0] for r in con.execute("select distinct gpu_model_raw from gpu_hour_parts").fetchall()}
    assert {"Tesla T4", "NVIDIA A10G"} <= models
    pods = {r[0] for r in con.execute("select distinct namespace from gpu_pod_parts where namespace <> ''").fetchall()}
    assert pods, "the A10G line's pod/namespace labels are kept"


def test_reingest_is_unchanged_and_touches_nothing(samples, warehouse):
    path = samples / FOCUS_SAMPLE
    ingest_json(warehouse, path)
    con = duckdb.connect(str(warehouse), read_only=True)
    before = con.execute("select count(*), sum(billed_cost), max(file_id) from charges").fetchone()
    n_files = con.execute("select count(*) from source_files").fetchone()[0]
    con.close()
    (f,) = ingest_json(warehouse, path)["files"]
    assert f["status"] == "unchanged"
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select count(*), sum(billed_cost), max(file_id) from charges").fetchone() == before
    assert con.execute("select count(*) from source_files").fetchone()[0] == n_files


@pytest.mark.parametrize("name", ["focus-0.5__focus_validator__all_pass_0.5.csv",
                                  "aws-cur-legacy__focus-converters__sample-anonymous-aws-export-dataset.csv"])
def test_other_billing_samples_balance(samples, warehouse, name):
    (f,) = ingest_json(warehouse, samples / "billing" / name)["files"]
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
    assert f["rows_rejected"] == 0
