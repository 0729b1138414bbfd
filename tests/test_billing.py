"""Cloud billing exports into one charges table, to the cent (issue 3)."""
from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipelines.cli import main
from tests.conftest import DATA, ingest_json, run_cli

# The file's own billed column, summed without meterbook's readers.
RAW_BILLED = {
    "focus-1.0__focus-sample-data__focus_sample.csv": "try_cast(nullif(BilledCost, 'NULL') as decimal(38, 12))",
    "focus-0.5__focus_validator__all_pass_0.5.csv": "try_cast(BilledCost as decimal(38, 12))",
    "aws-cur-legacy__focus-converters__sample-anonymous-aws-export-dataset.csv": "try_cast(\"lineItem/UnblendedCost\" as decimal(38, 12))",
    "azure-ea-actual__finops-toolkit__EA_ActualCost_Small.csv": "try_cast(Cost as decimal(38, 12))",
    "azure-ea-amortized__finops-toolkit__EA_AmortizedCost_Small.csv": "try_cast(Cost as decimal(38, 12))",
    "azure-ea__focus-converters__sample-anonymous-ea-export-dataset.csv": "try_cast(CostInBillingCurrency as decimal(38, 12))",
    "oci__focus-converters__reports_cost-csv_0000000030000269.csv": "try_cast(\"cost/myCost\" as decimal(38, 12))",
}


def raw_sum(path: Path, expr: str) -> float:
    return float(duckdb.sql(f"select sum({expr}) from read_csv(?, all_varchar = true)", params=[str(path)]).fetchall()[0][0])


def test_every_billing_sample_is_covered(samples):
    names = {p.name for p in (samples / "billing").iterdir() if p.is_file()}
    assert names - set(RAW_BILLED) == {"focus__focus_validator__sample.parquet"}


@pytest.mark.parametrize("name", sorted(RAW_BILLED))
def test_billing_sample_total_equals_its_billed_column(samples, warehouse, name):
    path = samples / "billing" / name
    (f,) = ingest_json(warehouse, path)["files"]
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
    assert f["rows_rejected"] == 0
    assert round(f["totals"]["billed_cost"], 2) == round(raw_sum(path, RAW_BILLED[name]), 2)


def test_focus_sample_anomalies_are_findings(samples, warehouse):
    (f,) = ingest_json(warehouse, samples / "billing" / "focus-1.0__focus-sample-data__focus_sample.csv")["files"]
    found = f["totals"]["findings"]
    assert found["billed_without_effective"] >= 600    # 604 AWS rows per input-formats.md
    assert found["negative_usage"] > 0
    assert found["credit_effective_differs"] == 1


def test_parquet_sample_without_cost_columns_is_a_clear_error(samples, warehouse):
    """The validator's Parquet smoke file has no cost or period columns: it is read, then refused."""
    code, _, err = run_cli("ingest", str(samples / "billing" / "focus__focus_validator__sample.parquet"),
                           "--kind", "focus", "--warehouse", str(warehouse))
    assert code == 1 and "Traceback" not in err
    assert "missing required columns BilledCost, BillingCurrency, ChargePeriodStart" in err


def test_legacy_cur_gzip_and_parquet_equal_csv(samples, warehouse, tmp_path):
    src = samples / "billing" / "aws-cur-legacy__focus-converters__sample-anonymous-aws-export-dataset.csv"
    gz = tmp_path / "cur-00001.csv.gz"
    with open(src, "rb") as fin, gzip.open(gz, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    pq = tmp_path / "cur-athena.parquet"
    # Athena/Parquet deliveries spell lineItem/UsageAmount as line_item_usage_amount
    cols = duckdb.sql("select * from read_csv(?, all_varchar = true) limit 0", params=[str(src)]).columns
    import re
    snake = {c: re.sub(r"(?<!^)(?=[A-Z])", "_", c.replace("/", "_")).lower().replace("__", "_") for c in cols}
    select = ", ".join(f'"{c}" as "{s}"' for c, s in snake.items())
    duckdb.sql(f"copy (select {select} from read_csv('{src}', all_varchar = true)) to '{pq}' (format parquet)")
    expected = raw_sum(src, RAW_BILLED[src.name])
    for path in (gz, pq):
        (f,) = ingest_json(tmp_path / f"{path.stem}.duckdb", path)["files"]
        assert f["kind"] == "aws-cur" and f["rows_rejected"] == 0
        assert round(f["totals"]["billed_cost"], 2) == round(expected, 2)


def test_cur2_map_columns_gpu_hours_and_effective_cost(warehouse, tmp_path):
    csv = DATA / "aws_cur2" / "cur2_gpu_instances_map_columns.csv"
    (f,) = ingest_json(warehouse, csv)["files"]
    assert f["kind"] == "aws-cur2"
    # p5.48xlarge 1 h x 8 + ml.p4d.24xlarge 2 h x 8 + g6e.12xlarge (SP-covered) 1 h x 4; negation not counted
    assert f["totals"]["gpu_hours"] == pytest.approx(28.0)
    # 98.32 + 75.46 + 6.30 (SP rate) + 0 (negation) + 1.14 (unused commitment) - 25 (credit)
    assert f["totals"]["effective_cost"] == pytest.approx(156.22)
    con = duckdb.connect(str(warehouse), read_only=True)
    tags = dict(con.execute("select resource_id, tags['team'] from charges where resource_id is not null").fetchall())
    assert tags["i-0p5aaaa"] == "research"
    con.close()
    # The same data as Parquet with real MAP columns
    pq = tmp_path / "cur2.parquet"
    duckdb.sql(f"""copy (select * replace (cast(json(product) as map(varchar, varchar)) as product,
                                         cast(json(resource_tags) as map(varchar, varchar)) as resource_tags)
                   from read_csv('{csv}', all_varchar = true)) to '{pq}' (format parquet)""")
    (g,) = ingest_json(tmp_path / "pq.duckdb", pq)["files"]
    assert g["kind"] == "aws-cur2"
    assert g["totals"]["gpu_hours"] == pytest.approx(28.0)
    assert g["totals"]["effective_cost"] == pytest.approx(156.22)


def test_gcp_detailed_export_credits_are_their_own_lines(warehouse):
    (f,) = ingest_json(warehouse, DATA / "gcp" / "gcp_detailed_export_with_credits.jsonl")["files"]
    assert f["kind"] == "gcp-billing" and f["format_version"] == "detailed"
    assert (f["rows_read"], f["rows_loaded"]) == (4, 4)
    assert f["totals"]["gpu_hours"] == pytest.approx(9.0)     # A100 GPU SKU 8 h + L4 1 h
    assert f["totals"]["billed_cost"] == pytest.approx(19.02)  # cost 29.34 and credits -10.32, not clamped
    con = duckdb.connect(str(warehouse), read_only=True)
    cats = dict(con.execute("select charge_category, count(*) from charges group by all").fetchall())
    assert cats == {"Usage": 3, "Tax": 1, "Credit": 3}
    lineage = con.execute("select distinct row_number from charges where charge_category = 'Credit' order by 1").fetchall()
    assert lineage == [(1,), (3,)]
    assert con.execute("select billing_period_start from charges where row_number = 3").fetchall()[0][0].month == 10


def test_gcp_standard_csv_export(warehouse):
    (f,) = ingest_json(warehouse, DATA / "gcp" / "gcp_standard_export_dotted_columns.csv")["files"]
    assert f["format_version"] == "standard"
    assert f["totals"]["gpu_hours"] == pytest.approx(4.0)
    assert f["totals"]["billed_cost"] == pytest.approx(7.97)


def test_azure_amortized_reservation(warehouse):
    (f,) = ingest_json(warehouse, DATA / "azure" / "azure_ea_amortized_reservation_gpu.csv")["files"]
    assert f["kind"] == "azure-cost" and f["rows_rejected"] == 0
    # ND96amsr A100 v4: 2.4 x "10 Hours" = 24 h x 8 GPUs; NC24ads A100 v4: 10 h x 1; unused reservation is not GPU time
    assert f["totals"]["gpu_hours"] == pytest.approx(202.0)
    assert f["totals"]["effective_cost"] == pytest.approx(661.85)
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select tags['team'] from charges where row_number = 1").fetchall()[0][0] == "research"


def test_restated_month_replaces_the_earlier_delivery(warehouse, tmp_path):
    first = DATA / "focus" / "focus_1.2_minimal.csv"
    second = tmp_path / "focus_1.2_restated.csv"
    second.write_text(first.read_text().replace("98.32,111122223333", "90.00,111122223333", 1))
    ingest_json(warehouse, first)
    (f,) = ingest_json(warehouse, second)["files"]
    assert any("restated delivery" in n for n in f["notes"])
    alone = ingest_json(tmp_path / "alone.duckdb", second)["files"][0]["totals"]["billed_cost"]
    con = duckdb.connect(str(warehouse), read_only=True)
    assert float(con.execute("select sum(billed_cost) from charges").fetchone()[0]) == pytest.approx(alone)
    assert con.execute("select status from source_files order by file_id").fetchall() == [("replaced",), ("loaded",)]


def test_a_month_redelivered_in_another_format_replaces_the_first(warehouse, tmp_path):
    """A CUR migration: the month first came as a legacy CUR, then as CUR 2.0 for the same payer.
    Both are the same charges; keeping both would bill the month twice."""
    legacy = tmp_path / "legacy" / "cur.csv"
    legacy.parent.mkdir()
    legacy.write_text(
        "identity/LineItemId,bill/PayerAccountId,bill/BillingPeriodStartDate,lineItem/UsageAccountId,"
        "lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UsageEndDate,lineItem/UsageAmount,"
        "lineItem/CurrencyCode,lineItem/UnblendedCost\n"
        "a1,999988887777,2026-10-01T00:00:00.000Z,999988887777,Usage,2026-10-03T00:00:00Z,2026-10-03T01:00:00Z,1,USD,123.45\n")
    cur2 = DATA / "aws_cur2" / "cur2_gpu_instances_map_columns.csv"
    assert ingest_json(warehouse, legacy)["files"][0]["kind"] == "aws-cur"
    (f,) = ingest_json(warehouse, cur2)["files"]
    assert f["kind"] == "aws-cur2" and any("was aws-cur" in n for n in f["notes"]), f["notes"]
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select kind, status from source_files order by file_id").fetchall() == [
        ("aws-cur", "replaced"), ("aws-cur2", "loaded")]
    assert float(con.execute("select sum(billed_cost) from charges").fetchone()[0]) == pytest.approx(f["totals"]["billed_cost"])


def test_parts_of_one_delivery_in_one_run_do_not_replace_each_other(warehouse, tmp_path):
    src = (DATA / "focus" / "focus_1.2_minimal.csv").read_text().splitlines()
    folder = tmp_path / "delivery"
    folder.mkdir()
    (folder / "part-1.csv").write_text("\n".join(src[:2]) + "\n")
    (folder / "part-2.csv").write_text("\n".join([src[0]] + src[2:]) + "\n")
    files = ingest_json(warehouse, folder)["files"]
    assert [f["status"] for f in files] == ["loaded", "loaded"]
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select count(*) from charges").fetchone()[0] == 3


CUR_HEADER = ("identity/LineItemId,bill/PayerAccountId,bill/BillingPeriodStartDate,lineItem/UsageAccountId,"
              "lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UsageEndDate,lineItem/UsageAmount,"
              "lineItem/CurrencyCode,lineItem/UnblendedCost\n")


def cur_period_folder(root: Path) -> Path:
    """A CUR period folder as S3 holds it: two assemblies (the month refreshed), the period
    manifest naming the newer one's two parts, the copies inside each assembly, Redshift SQL."""
    period = root / "cur" / "report" / "20261001-20261101"
    def part(assembly: str, n: int, cost: str) -> None:
        d = period / assembly
        d.mkdir(parents=True, exist_ok=True)
        with gzip.open(d / f"report-{n}.csv.gz", "wt") as fh:
            fh.write(CUR_HEADER + f"{assembly}{n},444455556666,2026-10-01T00:00:00.000Z,444455556666,Usage,"
                     f"2026-10-0{n}T00:00:00Z,2026-10-0{n}T01:00:00Z,1,USD,{cost}\n")
    def manifest(where: Path, assembly: str) -> None:
        keys = [f"prefix/report/20261001-20261101/{assembly}/report-{n}.csv.gz" for n in (1, 2)]
        (where / "report-Manifest.json").write_text(
            f'{{"assemblyId": "{assembly}", "billingPeriod": {{"start": "20261001T000000.000Z", "end": "20261101T000000.000Z"}}, '
            f'"bucket": "b", "reportKeys": ["{keys[0]}", "{keys[1]}"]}}')
    part("old-assembly", 1, "10.00"); part("old-assembly", 2, "20.00")
    part("new-assembly", 1, "11.00"); part("new-assembly", 2, "21.50")
    manifest(period, "new-assembly")
    manifest(period / "new-assembly", "new-assembly")
    manifest(period / "old-assembly", "old-assembly")
    (period / "new-assembly" / "report-RedshiftCommands.sql").write_text("copy ...;\n")
    return period


def test_cur_manifest_picks_the_delivered_assembly(warehouse, tmp_path):
    period = cur_period_folder(tmp_path)
    files = ingest_json(warehouse, period)["files"]
    assert [Path(f["path"]).parent.name for f in files] == ["new-assembly", "new-assembly"]
    assert "2 part(s); 2 file(s) it does not list skipped" in files[0]["notes"][0]
    con = duckdb.connect(str(warehouse), read_only=True)
    assert float(con.execute("select sum(billed_cost) from charges").fetchone()[0]) == pytest.approx(32.50)


def test_cur_manifest_with_a_missing_part_stops_before_loading(warehouse, tmp_path):
    period = cur_period_folder(tmp_path)
    (period / "new-assembly" / "report-2.csv.gz").unlink()
    code, out, err = run_cli("ingest", str(period), "--warehouse", str(warehouse))
    assert code == 1 and "delivery incomplete" in err and "report-2.csv.gz" in err and "Traceback" not in err
    assert not warehouse.exists() or duckdb.connect(str(warehouse), read_only=True).execute(
        "select count(*) from charges").fetchone()[0] == 0


def data_export_folder(root: Path) -> tuple[Path, Path]:
    """A CUR 2.0 Data Export as S3 holds it: the month's data under data/BILLING_PERIOD=...,
    its manifest under metadata/BILLING_PERIOD=..., and a file the manifest does not list."""
    export = root / "my-cur2"
    data = export / "data" / "BILLING_PERIOD=2025-10"
    meta = export / "metadata" / "BILLING_PERIOD=2025-10"
    data.mkdir(parents=True)
    meta.mkdir(parents=True)
    lines = (DATA / "aws_cur2" / "cur2_gpu_instances_map_columns.csv").read_text().splitlines(keepends=True)
    with gzip.open(data / "my-cur2-00001.csv.gz", "wt") as fh:
        fh.writelines(lines)
    with gzip.open(data / "my-cur2-00009.csv.gz", "wt") as fh:     # left from an earlier export run
        fh.writelines(lines[:2])
    (meta / "my-cur2-Manifest.json").write_text(
        '{"executionId": "e1", "billingPeriod": {"start": "2025-10-01", "end": "2025-11-01"}, '
        '"dataFiles": ["s3://bucket/prefix/my-cur2/data/BILLING_PERIOD=2025-10/my-cur2-00001.csv.gz"]}')
    return export, data


def test_data_export_manifest_governs_its_data_partition(warehouse, tmp_path):
    export, data = data_export_folder(tmp_path)
    files = ingest_json(warehouse, export)["files"]
    assert [Path(f["path"]).name for f in files] == ["my-cur2-00001.csv.gz"]
    assert "1 part(s); 1 file(s) it does not list skipped" in files[0]["notes"][0]
    (data / "my-cur2-00001.csv.gz").unlink()
    code, _, err = run_cli("ingest", str(export), "--warehouse", str(tmp_path / "other.duckdb"))
    assert code == 1 and "delivery incomplete" in err and "my-cur2-00001.csv.gz" in err


def test_a_quoted_glob_is_expanded(warehouse, tmp_path):
    period = cur_period_folder(tmp_path)
    files = ingest_json(warehouse, str(period / "new-assembly" / "*.csv.gz"))["files"]
    assert sorted(Path(f["path"]).name for f in files) == ["report-1.csv.gz", "report-2.csv.gz"]


AZURE = DATA / "azure"


def test_azure_cost_details_without_charge_type_is_read_as_usage_with_a_note(warehouse):
    """An MCA cost-details export (CostInBillingCurrency) without its ChargeType column is read
    as the usage-details layout is: every row Usage, and a note says so."""
    (f,) = ingest_json(warehouse, AZURE / "azure_mca_cost_details_without_chargetype.csv")["files"]
    assert (f["kind"], f["rows_read"], f["rows_loaded"]) == ("azure-cost", 3, 3)
    assert f["totals"]["billed_cost"] == pytest.approx(541.85)
    assert f["totals"]["gpu_hours"] == pytest.approx(202.0)
    assert any("no ChargeType column" in n for n in f["notes"]), f["notes"]


def test_azure_localised_headers_are_read_by_their_english_name(warehouse, tmp_path):
    """`Kosten (Cost)`, `Datum (Date)`: the English name in parentheses is the column's name."""
    (f,) = ingest_json(warehouse, AZURE / "azure_localised_headers_english_in_parentheses.csv")["files"]
    (english,) = ingest_json(tmp_path / "en.duckdb", AZURE / "azure_ea_amortized_reservation_gpu.csv")["files"]
    assert f["kind"] == "azure-cost" and f["rows_rejected"] == 0
    assert f["totals"] == english["totals"]
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select tags['team'] from charges where row_number = 1").fetchall()[0][0] == "research"


def test_azure_errors_name_the_exports_own_columns(warehouse, tmp_path):
    """A missing column and a cell that does not parse are named as the export names them."""
    no_date = tmp_path / "no_date.csv"
    no_date.write_text((AZURE / "azure_mca_cost_details_without_chargetype.csv").read_text(encoding="utf-8")
                       .replace(",Date,", ",UsageDay,", 1), encoding="utf-8")
    code, _, err = run_cli("ingest", str(no_date), "--warehouse", str(warehouse))
    assert code == 1 and "missing required column Date (header)" in err, err
    bad_cost = tmp_path / "bad_cost.csv"
    bad_cost.write_text((AZURE / "azure_usage_details_legacy_pretaxcost.csv").read_text(encoding="utf-8")
                        .replace(",88.152,", ',"88,152",', 1), encoding="utf-8")
    (f,) = ingest_json(warehouse, bad_cost)["files"]
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select column_name, value from rejects where check_name = 'parses_as_decimal'").fetchall() == [
        ("PreTaxCost", "88,152")]
    assert f["rows_rejected"] == 1


# A cost cell of each format's fixture set beyond sources/reference/billing_limits.csv cost_abs_max
# (1e13): every reader's line is checked on the shared path (sources/billing.py line_checks_sql).
BEYOND = [(DATA / "aws_cur2" / "cur2_gpu_instances_map_columns.csv", ("line_item_net_unblended_cost", "line_item_unblended_cost")),
          (AZURE / "azure_usage_details_legacy_pretaxcost.csv", ("PreTaxCost",)),
          (DATA / "gcp" / "gcp_standard_export_dotted_columns.csv", ("cost",)),
          (DATA / "oci" / "oci_zero_cost_rows_blank_currency.csv", ("cost/myCost",))]


@pytest.mark.parametrize("path, columns", BEYOND, ids=[p.parent.name for p, _ in BEYOND])
def test_every_billing_format_rejects_a_cost_beyond_the_limit(warehouse, tmp_path, path, columns):
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")))
    for column in set(columns) & set(rows[0]):
        rows[1][rows[0].index(column)] = "20000000000000"
    changed = tmp_path / path.name
    with open(changed, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    (f,) = ingest_json(warehouse, changed)["files"]
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"] and f["rows_rejected"] == 1
    con = duckdb.connect(str(warehouse), read_only=True)
    # named as the export names the column the cost is read from (the first of `columns` it has)
    named = next(c for c in columns if c in rows[0])
    assert set(con.execute("select row_number, column_name, check_name from rejects").fetchall()) == {(1, named, "within_billing_limit")}


# --- whatever ingest accepts, build and the chargeback report take -----------------------------
FOCUS_MINIMAL = (DATA / "focus" / "focus_1.2_minimal.csv").read_text(encoding="utf-8").splitlines()
# Around the limits of billing_limits.csv (1e13 money, 1e24 quantities, 1e9 GPU-line hours) and past
# what DECIMAL(38, 12) holds, with the spellings a cell can take.
EDGE_NUMBERS = ["1e13", "-1e13", "9999999999999.999999999999", "1.00000000000001e13", "9e25", "1e26", "1e27", "1e24",
                "-1e24", "1e9", "1000000001", "3.6e12", "1e-13", "0", "-0.0", "NaN", "inf", "-Infinity", "", "1e308", "1e400"]
numbers = st.one_of(st.sampled_from(EDGE_NUMBERS),
                    st.floats(allow_nan=True, allow_infinity=True).map(repr),
                    st.decimals(min_value=-10 ** 14, max_value=10 ** 14, places=12, allow_nan=False).map(str))
focus_rows = st.lists(st.fixed_dictionaries({
    "BilledCost": numbers, "EffectiveCost": numbers, "ListCost": numbers, "ConsumedQuantity": numbers,
    "ConsumedUnit": st.sampled_from(["Hours", "Seconds", "Minutes", "GB", ""]),
    "template": st.integers(0, 2), "end_hours": st.sampled_from([1, 0, -1, 744])}), min_size=1, max_size=12)


def focus_file(rows: list[dict], path: Path) -> Path:
    """The minimal FOCUS file's rows (a p5, a g5 and a credit) with the drawn numbers written in."""
    header = FOCUS_MINIMAL[0].split(",")
    out = [header]
    for r in rows:
        cells = next(csv.reader([FOCUS_MINIMAL[1 + r["template"]]]))
        start = cells[header.index("ChargePeriodStart")]
        end = datetime.fromisoformat(start.replace("Z", "+00:00")) + timedelta(hours=r["end_hours"])
        cells[header.index("ChargePeriodEnd")] = end.strftime("%Y-%m-%dT%H:%M:%SZ")
        for column in ("BilledCost", "EffectiveCost", "ListCost", "ConsumedQuantity", "ConsumedUnit"):
            cells[header.index(column)] = r[column]
        out.append(cells)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(out)
    return path


def cli_ok(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 0, res.output
    return res.stdout


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(rows=[{"BilledCost": b, "EffectiveCost": b, "ListCost": b, "ConsumedQuantity": q, "ConsumedUnit": "Hours",
                "template": t, "end_hours": 1} for b, q, t in (("1e13", "1e9", 0), ("9999999999999.99", "1e9", 0),
                                                              ("-1e13", "1e24", 2), ("9e25", "1e27", 1))])
@given(rows=focus_rows)
def test_whatever_focus_ingest_accepts_builds_and_reports(tmp_path_factory, rows):
    """Each example: one FOCUS file with drawn numbers, ingested (rejects or not), then build and
    the chargeback report run on it without a traceback; every loaded amount is within the limits."""
    tmp = tmp_path_factory.mktemp("limits")
    wh = tmp / "wh.duckdb"
    (f,) = json.loads(cli_ok("ingest", str(focus_file(rows, tmp / "focus.csv")), "--warehouse", str(wh), "--json"))["files"]
    assert f["rows_read"] == len(rows) == f["rows_loaded"] + f["rows_rejected"]
    con = duckdb.connect(str(wh), read_only=True)
    worst = con.execute("select max(greatest(abs(billed_cost), abs(coalesce(effective_cost, 0)), abs(coalesce(list_cost, 0)))), "
                        "max(abs(consumed_quantity)) from charges").fetchone()
    con.close()
    assert (worst[0] is None or worst[0] <= 1e13) and (worst[1] is None or worst[1] <= 1e24)
    cli_ok("build", "--warehouse", str(wh))
    if f["rows_loaded"]:     # (a month with no charges is refused by name: nothing to report)
        cli_ok("report", "chargeback", "--month", "2026-10", "--warehouse", str(wh), "--out", str(tmp / "out"))
