"""Every CSV meterbook writes goes through core/csv_out.py: text a spreadsheet would run as a
formula (= + - @ tab CR first) gets a leading quote, numbers (negative amounts too) stay numbers,
Parquet keeps the value as it is, and a file appears whole or not at all."""
from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from core.csv_out import FORMULA_START, copy_csv, copy_parquet, safe_cell, write_text
from tests.pdf_helpers import cli
from tests.test_export_safety import HYPERLINK, _is_number

MONTH = "2026-10"
DDE = "+cmd|' /C calc'!A0"
SUM = "@SUM(1+1)*cmd"
MINUS = "-2+3+cmd|' /C calc'!A0"
# demo team tag -> the payload that replaces it (JSON inside a CSV cell: quotes escaped twice)
TAG_PAYLOADS = {"recsys": DDE, "search": HYPERLINK.replace('"', '\\""')}
# demo job id -> the payload that replaces it
JOB_PAYLOADS = {"finetune-7b": SUM, "acme-embed-1b-pretrain": MINUS}


def _with_payloads(d: Path) -> None:
    """Formula payloads in the demo's FOCUS tags and work-log job ids."""
    focus = next((d / "billing").glob("focus-*111122223333*.csv"))   # the USD account, where the tags are
    text = focus.read_text(encoding="utf-8")
    for team, payload in TAG_PAYLOADS.items():
        text = text.replace(f'""team"":""{team}""', f'""team"":""{payload}""')
    focus.write_text(text, encoding="utf-8")
    work = next((d / "work").glob("*.csv"))
    text = work.read_text(encoding="utf-8")
    for job, payload in JOB_PAYLOADS.items():
        text = text.replace(f"{job},", f'"{payload}",')
    work.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    """The demo month with formula payloads as team tags and job ids, exported."""
    root = tmp_path_factory.mktemp("csv_writer")
    d, wh = root / "demo", root / "wh.duckdb"
    cli("demo", "--month", MONTH, "--out", str(d))
    _with_payloads(d)
    cli("ingest", str(d / "billing"), str(d / "dcgm"), str(d / "work"), "--warehouse", str(wh))
    common = ["--month", MONTH, "--warehouse", str(wh), "--config", str(d / "meterbook.toml")]
    cli("export", "allocation", *common, "--out", str(root / "exports"))
    cli("export", "jobs", *common, "--out", str(root / "jobs"))
    return {"allocation": root / "exports" / f"allocation-{MONTH}.csv", "jobs": root / "jobs.csv",
            "allocation_pq": root / "exports" / f"allocation-{MONTH}.parquet", "jobs_pq": root / "jobs.parquet"}


@pytest.mark.parametrize("name", ["allocation", "jobs"])
def test_no_exported_cell_runs_as_a_formula(exported, name):
    cells = [c for row in csv.reader(exported[name].open(encoding="utf-8", newline="")) for c in row]
    unsafe = [c for c in cells if c.startswith(FORMULA_START) and not _is_number(c)]
    assert unsafe == []


def test_formula_tags_and_job_ids_come_out_quoted(exported):
    teams = {r["team"] for r in csv.DictReader(exported["allocation"].open(encoding="utf-8", newline=""))}
    assert {"'" + DDE, "'" + HYPERLINK} <= teams and not {DDE, HYPERLINK} & teams
    jobs = {r["job_id"] for r in csv.DictReader(exported["jobs"].open(encoding="utf-8", newline=""))}
    assert {"'" + SUM, "'" + MINUS} <= jobs and not {SUM, MINUS} & jobs


def test_parquet_keeps_the_values_as_they_are(exported):
    teams = {r[0] for r in duckdb.sql(f"select distinct team from '{exported['allocation_pq']}'").fetchall()}
    assert {DDE, HYPERLINK} <= teams
    jobs = {r[0] for r in duckdb.sql(f"select job_id from '{exported['jobs_pq']}'").fetchall()}
    assert {SUM, MINUS} <= jobs


def test_copy_csv_quotes_text_and_leaves_numbers_negative_ones_included(tmp_path):
    con = duckdb.connect()
    con.execute("create table t (team varchar, amount decimal(18, 6), kwh double, note varchar)")
    con.execute("insert into t values ('=1+1', -12.5, -0.25, '-12.5'), ('\tx', 3, 1, '\r=1'), ('research', 0, 0, null)")
    out = copy_csv(con, "select * from t where amount > ?", [-100], tmp_path / "t.csv",
                   then="select * replace (amount::varchar as amount) from rows")
    rows = list(csv.reader(out.open(encoding="utf-8", newline="")))
    assert rows == [["team", "amount", "kwh", "note"], ["'=1+1", "-12.500000", "-0.25", "'-12.5"],
                    ["'\tx", "3.000000", "1.0", "'\r=1"], ["research", "0.000000", "0.0", ""]]
    assert [r[0] for r in csv.reader([safe_cell(v) for v in ("=1", "-12.5")])] == ["'=1", "'-12.5"]
    assert safe_cell(-12.5) == -12.5 and safe_cell(Decimal("-1")) == Decimal("-1")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    con = duckdb.connect()
    target = tmp_path / "t.parquet"
    write_text(target, "old")
    with pytest.raises(duckdb.Error):
        copy_parquet(con, "select error('disk gone') as x", [], target)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["t.parquet"]
