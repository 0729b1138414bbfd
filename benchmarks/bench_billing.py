"""Billing at the size of a large organisation's month: a legacy CUR of N line items (CSV.gz),
ingested end to end by `meterbook ingest`, against a bare DuckDB scan of the same file.

Targets (issue 24): ingest within 1.5x of the copy floor below at 5M and 20M lines; peak RSS
under 3 GB. Sizes: MB_BENCH_CUR_ROWS, a comma-separated list (default 5,000,000,20,000,000).

Two floors are measured beside it, because the bare scan reads one column of the 24 and stores
nothing: any ingest that keeps every line item must at least read every field (`read_all_fields`)
and write the rows into a DuckDB file (`copy_into_duckdb`: the file's own text columns copied
into a table as they are, under the warehouse's memory limit - no typing, checks or lineage).
The floor reads the file as DuckDB does, gzip inflated by its zlib; meterbook's ingest inflates
it once, with ISA-L, on the thread that hashes and counts it, and DuckDB reads the text as parts
(sources/text_parts.py). The ratios say where the time goes, and the ingest's own time is split
into its parts (benchmarks/ingest_parts.py), each set against the floor.
"""
from __future__ import annotations

import json
import os

import duckdb

from benchmarks.common import BENCH_DIR, ingest_code, measure, measure_in_turn, report, target

SIZES = [int(n) for n in os.environ.get("MB_BENCH_CUR_ROWS", "5000000,20000000").split(",")]
# issue 24: within 1.5x of copying the file's text into DuckDB (the floor of any ingest that keeps
# line items), at 5M and 20M lines, under 3 GB
COPY_RATIO_TARGET = 1.5
RSS_TARGET_MB = 3000


def generate(path, rows: int, compression: str = "gzip") -> None:
    """A legacy CUR with the demo's columns, in a real CUR's shape: each instance billed hour by
    hour through the month (744 lines), in one account, of one type, tagged with one team (one
    team in six untagged). Its allocation then has as many source groups as a real one of its
    size (about 27,000 at 20M lines) instead of one per line."""
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
                (100000000000 + r % 37)::varchar as "lineItem/UsageAccountId",
                'Usage' as "lineItem/LineItemType",
                strftime(timestamp '2026-10-01' + to_hours(i % 744), '%Y-%m-%dT%H:%M:%SZ') as "lineItem/UsageStartDate",
                strftime(timestamp '2026-10-01' + to_hours(i % 744 + 1), '%Y-%m-%dT%H:%M:%SZ') as "lineItem/UsageEndDate",
                'AmazonEC2' as "lineItem/ProductCode",
                'USE1-BoxUsage:' || ({types}::varchar[])[1 + r % {len(types)}] as "lineItem/UsageType",
                'RunInstances' as "lineItem/Operation",
                'us-east-1a' as "lineItem/AvailabilityZone",
                'i-' || lpad(to_hex(r), 17, '0') as "lineItem/ResourceId",
                '1.0' as "lineItem/UsageAmount",
                'USD' as "lineItem/CurrencyCode",
                round(0.1 + (r % 977) * 0.0131, 10)::varchar as "lineItem/UnblendedCost",
                'On Demand Linux instance hour' as "lineItem/LineItemDescription",
                'Amazon Elastic Compute Cloud' as "product/ProductName",
                ({types}::varchar[])[1 + r % {len(types)}] as "product/instanceType",
                'Compute Instance' as "product/productFamily",
                'us-east-1' as "product/regionCode",
                round(0.1 + (r % 977) * 0.0131, 10)::varchar as "pricing/publicOnDemandCost",
                'Hrs' as "pricing/unit",
                ({teams}::varchar[])[1 + r % {len(teams)}] as "resourceTags/user:team"
            from (select i, i // 744 as r from range({rows}) t(i))
        ) to '{path}' (header, compression {compression})""")


# The ingest's statements by part (benchmarks/ingest_parts.py matches them by how they start).
PARTS = {
    "one pass: read, type, check, write the lines": ("insert into charges (file_id, row_number, charge_line",
                                                     "create or replace temp view _raw_parts"),
    "duplicate line items (key hashes)": ("select count(*) from ( select line_item_hash as h",),
    "rows numbered, rejects, file id": ("update charges set", "insert into _rejects", "delete from charges"),
    "findings": ("create or replace temp table _findings",),
    "commit": ("commit",),
}


def main() -> None:
    for rows in SIZES:
        run(rows)


def run(rows: int) -> None:
    path = BENCH_DIR / f"cur-hourly-{rows}.csv.gz"
    generate(path, rows)
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
    copy, ingest = measure_in_turn([f"""
import duckdb, os
con = duckdb.connect('{copy_wh}')
con.execute("set memory_limit = '2GB'")
print(con.execute("create table copied as select * from read_csv('{path}', all_varchar = true)").fetchall())
con.close()
os.remove('{copy_wh}')""", ingest_code(path, wh, PARTS)])
    copy_wh.unlink(missing_ok=True)
    got = json.loads(ingest["stdout"].splitlines()[-1])
    for p in (wh, wh.with_suffix(".duckdb.wal")):
        p.unlink(missing_ok=True)
    ratio = ingest["wall_s"] / copy["wall_s"]
    report("billing", {
        "rows": rows, "file_mb_gz": round(size_mb, 1), "load_average": round(os.getloadavg()[0], 2),
        "bare_scan_s": round(bare["wall_s"], 2), "bare_scan_peak_rss_mb": round(bare["peak_rss_mb"]),
        "ingest_s": round(ingest["wall_s"], 2), "ingest_runs_s": ingest["runs_s"], "ingest_peak_rss_mb": round(ingest["peak_rss_mb"]),
        "ingest_rows_per_s": round(rows / ingest["wall_s"]),
        "ratio_to_bare_scan": round(ingest["wall_s"] / bare["wall_s"], 2),
        "floor_read_all_fields_s": round(read_all["wall_s"], 2),
        "floor_read_all_fields_ratio": round(read_all["wall_s"] / bare["wall_s"], 2),
        "floor_copy_into_duckdb_s": round(copy["wall_s"], 2), "floor_copy_runs_s": copy["runs_s"],
        "floor_copy_into_duckdb_ratio": round(copy["wall_s"] / bare["wall_s"], 2),
        "floor_copy_into_duckdb_peak_rss_mb": round(copy["peak_rss_mb"]),
        "ingest_ratio_to_copy": round(ratio, 2),
        "bare_result": bare["stdout"],
        "ingest_result": [got["rows_read"], got["rows_loaded"], got["rows_rejected"], got["totals"]["billed_cost"]],
        "targets": f"ingest / copy floor <= {COPY_RATIO_TARGET}, peak RSS < {RSS_TARGET_MB} MB",
    })
    print(above_floor(got, ingest["wall_s"], copy["wall_s"], read_all["wall_s"]), flush=True)
    target("billing", f"CUR {rows:,} lines: ingest / copy floor", ratio, COPY_RATIO_TARGET)
    target("billing", f"CUR {rows:,} lines: peak RSS", ingest["peak_rss_mb"], RSS_TARGET_MB, "MB")


def above_floor(got: dict, ingest_s: float, copy_s: float, read_s: float) -> str:
    """The ingest's wall time by part, each against what the copy floor spends on the same: the
    one pass against the whole copy (reading and writing the file's text), everything else
    against nothing. Names the part that costs most beyond the floor."""
    parts = dict(got["parts_s"])
    one_pass = parts.pop("one pass: read, type, check, write the lines")
    between = got["ingest_s"] - one_pass - sum(parts.values())
    beyond = {
        "one pass beyond the copy (typing, checks, more columns, the scan thread beside it)": one_pass - copy_s,
        "interpreter start (the copy floor's own is in it)": ingest_s - got["imports_s"] - got["connect_s"] - got["ingest_s"],
        "imports": got["imports_s"],
        "opening the warehouse, reference tables": got["connect_s"],
        "between statements (file head, waiting for parts the scan thread has not cut yet)": between,
        **parts,
    }
    lines = [f"ingest {ingest_s:.2f} s = copy floor {copy_s:.2f} s (of which reading every field {read_s:.2f} s) "
             f"+ {ingest_s - copy_s:.2f} s beyond it:"]
    lines += [f"  {s:7.2f} s  {label}" for label, s in sorted(beyond.items(), key=lambda kv: -kv[1])]
    lines.append(f"  (the scan thread - sha256, record count, the text cut into the parts DuckDB loads - used "
                 f"{got['scan_cpu_s']:.2f} CPU-s over {got['scan_wall_s']:.2f} s beside it, on the same cores)")
    worst = max(beyond, key=lambda k: beyond[k])
    lines.append(f"held above the floor most by: {worst} ({beyond[worst]:.2f} s)")
    return "\n".join(lines)
