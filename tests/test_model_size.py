"""A model is read in one sitting: no SQL model file (staging, intermediate, ephemeral, mart) is
over MAX_LINES. A longer one splits at its concerns into int_ models, or ephemeral ones
(pipelines/sql/<stage>/ephemeral/, inlined as CTEs: core.sql.with_ephemeral)."""
from __future__ import annotations

from pathlib import Path

MAX_LINES = 150
SQL = Path(__file__).parent.parent / "pipelines" / "sql"


def model_lines() -> dict[str, int]:
    return {str(p.relative_to(SQL)): len(p.read_text(encoding="utf-8").splitlines())
            for stage in ("10_staging", "20_intermediate", "30_marts") for p in sorted((SQL / stage).rglob("*.sql"))}


def test_no_model_is_longer_than_a_sitting():
    assert {f: n for f, n in model_lines().items() if n > MAX_LINES} == {}


def test_an_ephemeral_model_is_inlined_into_its_reader_not_built():
    from core.sql import ephemeral_models, read_sql
    from pipelines.models import sql_models
    ephemeral = set(ephemeral_models("20_intermediate"))
    assert {"int_gpu_hour_readings", "int_gpu_hour_gaps", "int_gpu_board_specs"} <= ephemeral
    models = {m.name: m for m in sql_models()}
    assert ephemeral & set(models) == set()
    # gpu_hours reads the loaded parts through them, each defined once and before its readers
    assert "gpu_hour_parts" in models["int_gpu_hours"].reads and not ephemeral & models["int_gpu_hours"].reads
    sql = read_sql("20_intermediate", "int_gpu_hours.sql")
    parts = ("int_gpu_board_specs", "int_gpu_hour_readings", "int_gpu_hour_gaps")
    starts = [sql.index(f"{name} as (") for name in parts]
    assert starts == sorted(starts) and all(sql.count(f"{n} as (") == 1 for n in parts)


def test_every_ephemeral_model_is_inlined_into_a_model_of_its_stage():
    """An ephemeral model no model of its stage reads would be dead text that still looks like
    part of the build (with_ephemeral only inlines a stage's own ephemeral models)."""
    from core.sql import ephemeral_models, read_sql, sql_files
    from pipelines.models import MODEL_FOLDERS, sql_models
    built = {m.name for m in sql_models()}
    for folder in MODEL_FOLDERS:
        ephemeral = set(ephemeral_models(folder))
        inlined = {n for f in sql_files(folder) for n in ephemeral if f"{n} as (" in read_sql(folder, f)}
        assert (folder, sorted(ephemeral - inlined)) == (folder, [])
        assert ephemeral & built == set()
    # the marts' parts: allocation_day's and the FOCUS exports'
    assert {"int_alloc_day_details", "int_alloc_day_shares", "int_focus_lines", "int_focus_alloc_costs"} <= set(
        ephemeral_models("30_marts"))


def test_a_split_model_reads_what_it_read_through_its_parts():
    """A model split into parts reads the same tables as before, each part defined once and
    before the parts that read it: staging as one query over the file's table, a mart or an
    intermediate model over the tables it read when it was one file."""
    from core.sql import read_sql
    from pipelines.models import sql_models, sql_reads
    models = {m.name: m for m in sql_models()}
    assert {"int_job_claims", "int_job_windows", "allocation_lines", "int_gpu_workloads",
            "int_energy_lines"} == models["job_month"].reads
    assert {"int_alloc_sources", "int_alloc_first_stage", "cfg_alloc_rules", "cfg_alloc_weights"} == models["int_alloc_targets"].reads
    assert "int_alloc_sources" in models["int_alloc_first_stage"].reads
    runs = read_sql("10_staging", "stg_codecarbon__runs.sql", timezone="null")
    assert sql_reads(runs) == {"raw_codecarbon", "_country_zones", "_region_zones", "_gpu_map", "ref_gpu_specs", "ref_check_limits"}
    for sql, parts in ((runs, ("stg_codecarbon__typed", "stg_codecarbon__bounds", "stg_codecarbon__snapshots")),
                       (read_sql("30_marts", "job_month.sql"), ("int_job_alloc_basis", "int_job_allocated")),
                       (read_sql("30_marts", "job_month.sql"), ("int_job_gpu_time", "int_job_work"))):
        starts = [sql.index(f"{name} as (") for name in parts]
        assert starts == sorted(starts) and all(sql.count(f"{n} as (") == 1 for n in parts)
