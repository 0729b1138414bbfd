"""Reports and exports only read marts: one formula per figure, computed by the build step.

The proof is a warehouse that holds nothing else: the demo's marts, the lineage tables and the
reference data copied into a fresh DuckDB file. Every report renders from it, and says the same
as from the full warehouse; a report that ran a stage or read a staging or intermediate table
would fail here (the tables and the config's temp tables are simply not there)."""
from __future__ import annotations

import ast
from pathlib import Path

import duckdb
import pytest

from pipelines.config import load_config
from pipelines.stages import MARTS
from reports.audit import write_audit
from reports.chargeback import write_chargeback
from tests.pdf_helpers import cli, text

MONTH = "2026-10"
LINEAGE = ("source_files", "rejects", "findings")
REPORT_PACKAGES = ("reports",)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("marts_only")
    d = root / "demo"
    cli("demo", "--month", MONTH, "--out", str(d))
    wh = root / "full.duckdb"
    cli("ingest", str(d / "billing"), str(d / "dcgm"), str(d / "codecarbon"), str(d / "disclosures"), str(d / "work"),
        str(d / "grid"), str(d / "instruments"), "--warehouse", str(wh))
    cli("build", "--warehouse", str(wh), "--config", str(d / "meterbook.toml"))
    slim = root / "marts_only.duckdb"
    with duckdb.connect(str(slim)) as con:
        con.execute(f"attach '{wh}' as src (read_only)")
        tables = [r[0] for r in con.execute("select table_name from duckdb_tables() where database_name = 'src'").fetchall()]
        keep = [t for t in tables if t in MARTS or t in LINEAGE or t.startswith("ref_")]
        for t in keep:
            con.execute(f"create table {t} as select * from src.{t}")
        con.execute("detach src")
    return {"root": root, "demo": d, "full": wh, "slim": slim, "config": load_config(d / "meterbook.toml"),
            "dropped": sorted(set(tables) - set(keep))}


def test_the_slim_warehouse_lacks_every_staging_and_intermediate_table(demo):
    assert {"charges", "gpu_hour_parts", "int_gpu_hours", "int_gpu_workloads", "int_energy_lines",
            "int_charges_teams", "disclosures", "runs"} <= set(demo["dropped"])


def test_chargeback_and_statements_render_from_marts_alone(demo):
    from pipelines.warehouse import connect
    out_slim, out_full = demo["root"] / "slim", demo["root"] / "full"
    with connect(demo["slim"]) as con:
        slim = write_chargeback(con, demo["config"], MONTH, out_slim, per_team=True)
    with connect(demo["full"]) as con:
        full = write_chargeback(con, demo["config"], MONTH, out_full, per_team=True)
    assert [p.name for p in slim] == [p.name for p in full]
    assert (out_slim / "chargeback.csv").read_text() == (out_full / "chargeback.csv").read_text()
    # lineage prints the warehouse hash, which depends only on the loaded files: equal too
    assert text(out_slim / "chargeback.pdf") == text(out_full / "chargeback.pdf")


def test_audit_renders_from_marts_alone(demo):
    from pipelines.warehouse import connect
    with connect(demo["slim"]) as con:
        write_audit(con, demo["config"], [], MONTH, demo["root"] / "audit_slim")
    with connect(demo["full"]) as con:
        write_audit(con, demo["config"], [], MONTH, demo["root"] / "audit_full")
    assert text(demo["root"] / "audit_slim" / "audit.pdf") == text(demo["root"] / "audit_full" / "audit.pdf")


def test_no_report_module_imports_the_build():
    """Static half of the rule: nothing under reports/ imports the stage runner."""
    root = Path(__file__).parent.parent
    for package in REPORT_PACKAGES:
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                    assert not any(n.startswith("pipelines.stages") for n in names), f"{path} imports the build"
