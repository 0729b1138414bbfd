"""Billing at the size of a large organisation's month: a legacy CUR of N line items (CSV.gz),
ingested end to end by `meterbook ingest`, against a bare DuckDB scan of the same file.

Targets (issue 3): ingest within 2x of the bare scan's time; peak RSS under 3 GB.
Size: MB_BENCH_CUR_ROWS (default 20,000,000).

Two floors are measured beside it, because the bare scan reads one column of the 24 and stores
nothing: any ingest that keeps every line item must at least read every field (`read_all_fields`)
and write the rows into a DuckDB file (`copy_into_duckdb`: the file's own text columns copied
into a table as they are, under the warehouse's memory limit - no typing, checks or lineage).
An ingest cannot be faster than the second; the ratios say where the time goes.
"""
from __future__ import annotations

import os

import duckdb

from benchmarks.common import BENCH_DIR, measure, report, target

ROWS = int(os.environ.get("MB_BENCH_CUR_ROWS", "20000000"))
# issue 24: within 1.5x of copying the file's text into DuckDB (the floor of any ingest that keeps
# line items), at 5M and 20M lines, under 3 GB
COPY_RATIO_TARGET = 1.5
RSS_TARGET_MB = 3000


def generate(path, rows: int, compression: str = "gzip") -> None:
    """A legacy CUR with the demo's columns: hourly GPU and CPU instance lines, tagged by team."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    types = ["p4d.24xlarge", "p5.48xlarge", "g5.xlarge", "g5.12xlarge", "c5.2xlarge", "m5.large", "r5.xlarge"]
    teams = ["research", "search", "recsys", "vision", "platform", ""]
    duckdb.sql(f"""
        copy (
            select
                md5(i::varchar) as "identity/LineItemId",
                '444455556666' as "bill/PayerAccountId",
                '2026-10-01T00:00:00.000Z' as "bill/BillingPeriodStartDate",
                '2026-11-01T00:00:00.000Z' as "bill/BillingPeriodEndDate",
                (100000000000 + i % 37)::varchar as "lineItem/UsageAccountId",
                'Usage' as "lineItem/LineItemType",
                strftime(timestamp '2026-10-01' + to_hours(i % 744), '%Y-%m-%dT%H:%M:%SZ') as "lineItem/UsageStartDate",
                strftime(timestamp '2026-10-01' + to_hours(i % 744 + 1), '%Y-%m-%dT%H:%M:%SZ') as "lineItem/UsageEndDate",
                'AmazonEC2' as "lineItem/ProductCode",
                'USE1-BoxUsage:' || ({types}::varchar[])[1 + i % {len(types)}] as "lineItem/UsageType",
                'RunInstances' as "lineItem/Operation",
                'us-east-1a' as "lineItem/AvailabilityZone",
                'i-' || lpad(to_hex(i % 50000), 17, '0') as "lineItem/ResourceId",
                '1.0' as "lineItem/UsageAmount",
                'USD' as "lineItem/CurrencyCode",
                round(0.1 + (i % 977) * 0.0131, 10)::varchar as "lineItem/UnblendedCost",
                'On Demand Linux instance hour' as "lineItem/LineItemDescription",
                'Amazon Elastic Compute Cloud' as "product/ProductName",
                ({types}::varchar[])[1 + i % {len(types)}] as "product/instanceType",
                'Compute Instance' as "product/productFamily",
                'us-east-1' as "product/regionCode",
                round(0.1 + (i % 977) * 0.0131, 10)::varchar as "pricing/publicOnDemandCost",
                'Hrs' as "pricing/unit",
                ({teams}::varchar[])[1 + i % {len(teams)}] as "resourceTags/user:team"
            from range({rows}) t(i)
        ) to '{path}' (header, compression {compression})""")


def main() -> None:
    path = BENCH_DIR / f"cur-legacy-{ROWS}.csv.gz"
    generate(path, ROWS)
    size_mb = path.stat().st_size / 1e6
    bare = measure(f"""
import duckdb
print(duckdb.sql("select count(*), sum(\\"lineItem/UnblendedCost\\"::decimal(38, 10)) from read_csv('{path}')").fetchall())""")
    with duckdb.connect() as con:
        columns = [r[0] for r in con.execute(f"describe select * from read_csv('{path}', all_varchar = true)").fetchall()]
    lengths = " + ".join(f'coalesce(length("{c}"), 0)' for c in columns)
    read_all = measure(f"""
import duckdb
print(duckdb.sql(\"\"\"select count(*), sum({lengths}) from read_csv('{path}', all_varchar = true)\"\"\").fetchall())""")
    wh = BENCH_DIR / "bench-billing.duckdb"
    copy_wh = BENCH_DIR / "bench-billing-copy.duckdb"
    for p in (wh, wh.with_suffix(".duckdb.wal"), copy_wh, copy_wh.with_suffix(".duckdb.wal")):
        p.unlink(missing_ok=True)
    copy = measure(f"""
import duckdb
con = duckdb.connect('{copy_wh}')
con.execute("set memory_limit = '2GB'")
print(con.execute("create table copied as select * from read_csv('{path}', all_varchar = true)").fetchall())""")
    copy_wh.unlink(missing_ok=True)
    ingest = measure(f"""
from pathlib import Path
from pipelines.ingest import ingest
from pipelines.warehouse import connect
r = ingest(connect(Path('{wh}')), [Path('{path}')])[0]
print(r.rows_read, r.rows_loaded, r.rows_rejected, r.totals['billed_cost'])""")
    report("billing", {
        "rows": ROWS, "file_mb_gz": round(size_mb, 1),
        "bare_scan_s": round(bare["wall_s"], 2), "bare_scan_peak_rss_mb": round(bare["peak_rss_mb"]),
        "ingest_s": round(ingest["wall_s"], 2), "ingest_peak_rss_mb": round(ingest["peak_rss_mb"]),
        "ingest_rows_per_s": round(ROWS / ingest["wall_s"]),
        "ratio_to_bare_scan": round(ingest["wall_s"] / bare["wall_s"], 2),
        "floor_read_all_fields_s": round(read_all["wall_s"], 2),
        "floor_read_all_fields_ratio": round(read_all["wall_s"] / bare["wall_s"], 2),
        "floor_copy_into_duckdb_s": round(copy["wall_s"], 2),
        "floor_copy_into_duckdb_ratio": round(copy["wall_s"] / bare["wall_s"], 2),
        "floor_copy_into_duckdb_peak_rss_mb": round(copy["peak_rss_mb"]),
        "ingest_ratio_to_copy": round(ingest["wall_s"] / copy["wall_s"], 2),
        "bare_result": bare["stdout"], "ingest_result": ingest["stdout"],
        "targets": f"ingest / copy floor <= {COPY_RATIO_TARGET}, peak RSS < {RSS_TARGET_MB} MB",
    })
    target("billing", f"CUR {ROWS:,} lines: ingest / copy floor", ingest["wall_s"] / copy["wall_s"], COPY_RATIO_TARGET)
    target("billing", f"CUR {ROWS:,} lines: peak RSS", ingest["peak_rss_mb"], RSS_TARGET_MB, "MB")
