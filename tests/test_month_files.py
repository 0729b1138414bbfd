"""month_files lists every file a month's figures read: the lineage page, the data-quality page
and the report's inputs hash rest on it, so a file left out is a figure that moves unseen."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.pdf_helpers import cli

MONTH = "2026-10"


@pytest.fixture(scope="module")
def demo_month(tmp_path_factory) -> Path:
    """The demo month ingested as `make report` does, and built."""
    root = tmp_path_factory.mktemp("month_files")
    d, wh = root / "demo", root / "wh.duckdb"
    cli("demo", "--month", MONTH, "--out", str(d))
    folders = ("billing", "invoices", "dcgm", "codecarbon", "disclosures", "work", "grid", "instruments", "slurm")
    cli("ingest", *(str(d / f) for f in folders), "--warehouse", str(wh))
    cli("build", "--warehouse", str(wh), "--config", str(d / "meterbook.toml"))
    return wh


def test_every_file_the_month_reads_is_listed(demo_month: Path) -> None:
    """The EUR -> USD rates convert vision's charges and the kube-state-metrics requests split a
    time-sliced node between pods: both move the month's figures, so both are its files. Every
    loaded file of the demo is of October; only the model disclosure (the audit's) is not."""
    with duckdb.connect(str(demo_month), read_only=True) as con:
        listed = dict(con.execute("select file_id, role from month_files where month = ?", [MONTH]).fetchall())
        loaded = dict(con.execute("select file_id, path from source_files where status = 'loaded' and kind <> 'disclosure'").fetchall())
    assert {Path(loaded[f]).name for f in set(loaded) - set(listed)} == set()
    roles = {Path(loaded[f]).name: r for f, r in listed.items()}
    assert roles["rates-eur-usd_2026-10.csv"] == "rates"
    assert {n: r for n, r in roles.items() if n.startswith("requests_")} == {
        "requests_ip-10-0-4-41.prom": "requests", "requests_ip-10-0-5-51.prom": "requests"}
