"""Telemetry at fleet scale: N GPUs x D days at interval S, as dcgm-exporter text (concatenated
scrapes with timestamps) and as long CSV, ingested end to end by `meterbook ingest` against a
bare DuckDB scan that reads the same bytes, in the same run.

Targets (issue 24): >= 60 % of the parsing bare scan's throughput (bytes/s) for both shapes, from
0.25 day to 10 days; peak RSS under 1.5 GB whatever the size; linear growth from 1 to 10 days.
Sizes: MB_BENCH_GPUS (1000) x MB_BENCH_DAYS (comma-separated, 0.25,1), MB_BENCH_INTERVAL (10 s); the
10 days are MB_BENCH_LINEARITY_GPUS (50) GPUs (1,000 GPUs x 10 days would be 88 GB of text), beside
the same GPUs over 1 day for the linearity.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb

from benchmarks.common import BENCH_DIR, ingest_code, measure, measure_in_turn, report, target

GPUS = int(os.environ.get("MB_BENCH_GPUS", "1000"))
DAYS = [float(d) for d in os.environ.get("MB_BENCH_DAYS", "0.25,1").split(",")]
INTERVAL = int(os.environ.get("MB_BENCH_INTERVAL", "10"))
LIN_GPUS = int(os.environ.get("MB_BENCH_LINEARITY_GPUS", "50"))
START_MS = 1791244800000    # 2026-10-06T00:00:00Z
METRICS = ["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",
           "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"]


def generate(path: Path, gpus: int, days: float, interval: int, shape: str, first_scrape: int = 0) -> Path:
    """Deterministic synthetic fleet: 8 GPUs a host, 13 namespaces, counter rising with power.
    first_scrape: the file starts that many scrapes after START_MS (one file of a series)."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    n = int(gpus * days * 86400 // interval)
    value = f"""case m.metric when '{METRICS[0]}' then (1000000000 + k * {interval} * 300000)::varchar
                    when '{METRICS[1]}' then (250 + (g * 7 + k) % 150)::varchar || '.125'
                    when '{METRICS[2]}' then ((g + k) % 101)::varchar else '0.512300' end"""
    uuid = "'GPU-' || md5(g::varchar)[1:8] || '-0000-0000-0000-000000000000'"
    if shape == "prom":
        row = f"""m.metric || '{{gpu="' || (g % 8) || '",UUID="' || {uuid} || '",pci_bus_id="00000000:10:00.0",device="nvidia' || (g % 8)
                  || '",modelName="NVIDIA A100-SXM4-40GB",Hostname="host-' || (g // 8) || '",container="main",namespace="ns-'
                  || (g % 13) || '",pod="pod-' || (g % 97) || '"}} ' || {value} || ' ' || ({START_MS} + k * {interval} * 1000)::varchar"""
        opts = "header false, quote '', escape '', delimiter '\\x01'"
    else:
        row = f"""strftime(make_timestamp(({START_MS} + k * {interval} * 1000) * 1000), '%Y-%m-%dT%H:%M:%SZ') || ',' || m.metric || ',host-'
                  || (g // 8) || ',' || {uuid} || ',' || (g % 8) || ',NVIDIA A100-SXM4-40GB,ns-' || (g % 13) || ',pod-' || (g % 97)
                  || ',' || {value}"""
        opts = "header false, quote '', escape '', delimiter '\\x01'"
    metrics = ", ".join(f"('{m}')" for m in METRICS)
    with duckdb.connect() as con:
        con.execute("set enable_progress_bar = false")
        if shape == "csv":
            path.write_text("timestamp,__name__,Hostname,UUID,gpu,modelName,namespace,pod,value\n")
        con.execute(f"""copy (select {row} as line from range({n}) t(i), (select i // {gpus} + {first_scrape} as k, i % {gpus} as g) s,
                              (values {metrics}) m(metric))
                       to '{path}.part' ({opts})""")
    if shape == "csv":
        with open(path, "ab") as out, open(f"{path}.part", "rb") as part:
            while chunk := part.read(1 << 24):
                out.write(chunk)
        os.remove(f"{path}.part")
    else:
        os.replace(f"{path}.part", path)
    return path


# Two bare scans of the same bytes. `lines` only finds line ends (no field is parsed): the floor
# for I/O. `parse` is what any reader of the shape must do, written as plainly as DuckDB allows:
# every field cut out and the value and time cast, then a trivial aggregate so none is pruned.
# The target ("a bare DuckDB scan that parses the same bytes") is judged on `parse`.
LINE_SCAN = ("select count(*) from read_csv('{path}', columns = {{'line': 'VARCHAR'}}, header = false, "
             "delim = '\\x01', quote = '', escape = '', auto_detect = false)")
PARSE_SCAN = {
    "prom": ("select count(*), max(length(a)), sum(try_cast(split_part(b, ' ', 2) as double)), "
             "max(try_cast(split_part(b, ' ', 3) as double)) from read_csv('{path}', "
             "columns = {{'a': 'VARCHAR', 'b': 'VARCHAR'}}, header = false, delim = '}}', quote = '', escape = '', "
             "auto_detect = false)"),
    "csv": ("select count(*), max(epoch_ms(timestamp)), max(length(__name__)), max(length(Hostname)), max(length(UUID)), max(gpu), "
            "max(length(modelName)), max(length(namespace)), max(length(pod)), sum(value) from read_csv('{path}')"),
}

# The parse scan plus the one pass any series-by-hour ingest makes: every sample grouped by its
# series (the line's series text / the CSV's metric and label columns) and UTC hour, with the
# aggregates the energy model reads (counts, first and last time and value, min, max, sum). The
# outer aggregate reads every one of them: over a bare count DuckDB drops the unread ones (once
# measured half a CPU-second cheaper than the work it stands for).
GROUPED_AGGREGATES = ("count(*) as n, count(v) as n_v, min(t) as t0, max(t) as t1, arg_min(v, t) as v0, arg_max(v, t) as v1, "
                      "min(v) as v_min, max(v) as v_max, sum(v) as v_sum")
GROUPED_READ = "select count(*), sum(n), sum(n_v), min(t0), max(t1), sum(v0), sum(v1), min(v_min), max(v_max), sum(v_sum) from ({})"
GROUPED_SCAN = {
    "prom": GROUPED_READ.format(
        f"select a, t // 3600000 as h, {GROUPED_AGGREGATES} from (select a, try_cast(split_part(b, ' ', 2) as double) as v, "
        "try_cast(split_part(b, ' ', 3) as bigint) as t from read_csv('{path}', columns = {{'a': 'VARCHAR', 'b': 'VARCHAR'}}, "
        "header = false, delim = '}}', quote = '', escape = '', auto_detect = false)) group by a, h"),
    "csv": GROUPED_READ.format(
        f"select __name__, Hostname, UUID, gpu, modelName, namespace, pod, t // 3600000 as h, {GROUPED_AGGREGATES} from "
        "(select *, epoch_ms(timestamp) as t, value as v from read_csv('{path}')) "
        "group by __name__, Hostname, UUID, gpu, modelName, namespace, pod, h"),
}


# issue 24: at least 60 % of a bare parsing scan's throughput, from 0.25 to 10 days of 1,000
# GPUs, both shapes. The linearity's 50 GPUs x 1 day (a fifth of the smallest of those, a second
# or two of work) is reported beside it without that target: there the fixed start every
# ingest pays (interpreter, imports, the warehouse's tables and reference data, about 0.3 s
# more than the bare scan's) is a third of the time.
THROUGHPUT_TARGET = 0.60
TARGET_MIN_GPU_DAYS = 1000 * 0.25
RSS_TARGET_MB = 1500


def scan(sql: str) -> dict:
    return measure(f"import duckdb\nprint(duckdb.sql({sql!r}).fetchall())")


def with_lineage(sql: str, path: Path, dialect: str) -> str:
    """Child code: a bare scan (`sql`) with what any ingest that keeps lineage does beside it: the
    file's sha256 and its record count without DuckDB (sources.linecount.scan, on a second
    thread, as the ingest runs it). Not the issue's target; with the parse scan and the grouped
    scan it splits the ingest's time into the parts any such ingest has to pay."""
    return f"""
import duckdb, threading
from pathlib import Path
from sources.linecount import scan
side = threading.Thread(target=scan, args=(Path({str(path)!r}), True, {dialect!r}))
side.start()
print(duckdb.sql({sql!r}).fetchall())
side.join()"""


# The ingest's statements by part (benchmarks/ingest_parts.py matches them by how they start).
PARTS = {
    "one pass: samples grouped by series and hour": ("create or replace temp table _tel_groups",),
    "labels, fold, load": ("create or replace temp table _tel_labelsets", "create or replace temp table _tel ",
                           "insert into gpu_hour_parts", "insert into gpu_pod_parts"),
    "file energy (gpu_hours model)": ("select split_part(gpu_uuid, ':', 1)::bigint, coalesce(dsum(energy_kwh)",),
    "commit": ("commit",),
}


def run_case(path: Path, shape: str) -> dict:
    size = path.stat().st_size
    lines = scan(LINE_SCAN.format(path=path))
    dialect = "prom" if shape == "prom" else "csv"
    wh = BENCH_DIR / f"{path.stem}.duckdb"
    wh.unlink(missing_ok=True)
    bare, lineage, grouped, ingest = measure_in_turn([
        f"import duckdb\nprint(duckdb.sql({PARSE_SCAN[shape].format(path=path)!r}).fetchall())",
        with_lineage(PARSE_SCAN[shape].format(path=path), path, dialect),
        with_lineage(GROUPED_SCAN[shape].format(path=path), path, dialect),
        ingest_code(path, wh, PARTS)])
    wh.unlink(missing_ok=True)
    got = json.loads(ingest["stdout"].splitlines()[-1])
    start = ingest["wall_s"] - got["ingest_s"]
    parts = {"interpreter start, imports, opening the warehouse": start, **got["parts_s"],
             "between statements (waiting for the scan thread)": got["ingest_s"] - sum(got["parts_s"].values())}
    return {"file": path.name, "size_mb": round(size / 1e6, 1), "load_average": round(os.getloadavg()[0], 2),
            "line_scan_s": round(lines["wall_s"], 2), "line_scan_mb_per_s": round(size / 1e6 / lines["wall_s"], 1),
            "parse_scan_s": round(bare["wall_s"], 2), "parse_scan_mb_per_s": round(size / 1e6 / bare["wall_s"], 1),
            "ingest_s": round(ingest["wall_s"], 2), "ingest_runs_s": ingest["runs_s"], "parse_scan_runs_s": bare["runs_s"],
            "ingest_mb_per_s": round(size / 1e6 / ingest["wall_s"], 1),
            "throughput_vs_parse_scan": round(bare["wall_s"] / ingest["wall_s"], 3),
            "parse_scan_with_lineage_read_s": round(lineage["wall_s"], 2),
            "throughput_vs_parse_scan_with_lineage_read": round(lineage["wall_s"] / ingest["wall_s"], 3),
            "grouped_scan_with_lineage_read_s": round(grouped["wall_s"], 2),
            "throughput_vs_grouped_scan_with_lineage_read": round(grouped["wall_s"] / ingest["wall_s"], 3),
            # The best ratio any ingest of this file could show against the parse scan, if it kept
            # lineage and grouped by series and hour and did nothing else, not even start up.
            "grouped_floor_vs_parse_scan": round(bare["wall_s"] / grouped["wall_s"], 3),
            # Each step's seconds over the one before: what the lineage read, the grouping and
            # meterbook's own work (fixed start, checks, labels, load, commit) each add to a parse.
            "floor_parts_s": {"parse scan": round(bare["wall_s"], 2),
                              "+ sha256 and record count beside it": round(lineage["wall_s"] - bare["wall_s"], 2),
                              "+ grouping by series and hour": round(grouped["wall_s"] - lineage["wall_s"], 2),
                              "+ meterbook's own (start, checks, fold, load)": round(ingest["wall_s"] - grouped["wall_s"], 2)},
            "throughput_vs_line_scan": round(lines["wall_s"] / ingest["wall_s"], 3),
            "ingest_peak_rss_mb": round(ingest["peak_rss_mb"]),
            "ingest_parts_s": {k: round(v, 2) for k, v in parts.items()},
            "scan_thread_cpu_s": round(got["scan_cpu_s"], 2), "scan_thread_wall_s": round(got["scan_wall_s"], 2),
            "result": [got["rows_read"], got["rows_loaded"], got["rows_rejected"], round(got["totals"]["energy_kwh"], 3)]}


def case(shape: str, gpus: int, days: float) -> dict:
    """Generate (cached) and measure one file; its figures go to the summary against the targets."""
    path = generate(BENCH_DIR / f"dcgm-{shape}-{gpus}gpu-{days:g}d-{INTERVAL}s.{'prom' if shape == 'prom' else 'csv'}",
                    gpus, days, INTERVAL, shape)
    got = run_case(path, shape)
    report(f"telemetry {shape} {gpus} GPUs x {days:g} d x {INTERVAL} s", got)
    target("telemetry", f"{shape} {gpus} GPUs x {days:g} d: ingest throughput / parse scan", got["throughput_vs_parse_scan"],
           THROUGHPUT_TARGET, at_least=True, judged=gpus * days >= TARGET_MIN_GPU_DAYS)
    # Beside it, the same ratio for the floor: where the floor itself is below the target, no
    # ingest that keeps the sha256 and count and groups once can reach it on this machine.
    target("telemetry", f"{shape} {gpus} GPUs x {days:g} d: its grouped floor / parse scan", got["grouped_floor_vs_parse_scan"],
           THROUGHPUT_TARGET, at_least=True, judged=False)
    target("telemetry", f"{shape} {gpus} GPUs x {days:g} d: peak RSS", got["ingest_peak_rss_mb"], RSS_TARGET_MB, "MB")
    return got


# A fleet's month often arrives as many small files (a host's scrapes cut by the hour or the day),
# where what an ingest pays per file, not per byte, decides: MB_BENCH_MANY_FILES consecutive
# files of one 8-GPU host, MB_BENCH_MANY_HOURS each, ingested by one command, against one parse
# scan of them all. Reported beside the targets, not judged: issue 24 names single files.
MANY_FILES = int(os.environ.get("MB_BENCH_MANY_FILES", "100"))
MANY_HOURS = float(os.environ.get("MB_BENCH_MANY_HOURS", "1"))
MANY_OVER_ONE_TARGET = 1.5    # the small files' ingest within this of one file holding the same scrapes


def many_files_inputs(shape: str) -> tuple[Path, Path]:
    """The folder of small files, and one file of the same scrapes (what batching the small
    files is judged against); written once."""
    ext = "prom" if shape == "prom" else "csv"
    folder = BENCH_DIR / f"dcgm-{shape}-{MANY_FILES}-files-8gpu-{MANY_HOURS:g}h-{INTERVAL}s"
    per_file = int(MANY_HOURS * 3600 // INTERVAL)
    for i in range(MANY_FILES):
        generate(folder / f"host-0-{i:05d}.{ext}", 8, MANY_HOURS / 24, INTERVAL, shape, first_scrape=i * per_file)
    single = BENCH_DIR / f"{folder.name}-as-one" / f"host-0.{ext}"
    generate(single, 8, MANY_FILES * MANY_HOURS / 24, INTERVAL, shape)
    return folder, single


def many_files(shape: str) -> dict:
    ext = "prom" if shape == "prom" else "csv"
    folder, single = many_files_inputs(shape)
    size = sum(p.stat().st_size for p in folder.iterdir())
    wh, wh_one = BENCH_DIR / f"{folder.name}.duckdb", BENCH_DIR / f"{folder.name}-as-one.duckdb"
    wh.unlink(missing_ok=True)
    wh_one.unlink(missing_ok=True)
    bare, ingest, one = measure_in_turn([
        f"import duckdb\nprint(duckdb.sql({PARSE_SCAN[shape].format(path=folder / ('*.' + ext))!r}).fetchall())",
        ingest_code(folder, wh, PARTS), ingest_code(single, wh_one, PARTS)])
    wh.unlink(missing_ok=True)
    wh_one.unlink(missing_ok=True)
    got = json.loads(ingest["stdout"].splitlines()[-1])
    got_one = json.loads(one["stdout"].splitlines()[-1])
    start = ingest["wall_s"] - got["ingest_s"]
    out = {"files": got["files"], "size_mb": round(size / 1e6, 1), "parse_scan_s": round(bare["wall_s"], 2),
           "ingest_s": round(ingest["wall_s"], 2), "ingest_runs_s": ingest["runs_s"],
           "throughput_vs_parse_scan": round(bare["wall_s"] / ingest["wall_s"], 3),
           "one_file_size_mb": round(single.stat().st_size / 1e6, 1), "one_file_ingest_s": round(one["wall_s"], 2),
           "many_over_one_file": round(ingest["wall_s"] / one["wall_s"], 3),
           "one_file_result": [got_one["rows_read"], got_one["rows_loaded"], round(got_one["totals"]["energy_kwh"], 3)],
           "ingest_ms_per_file": round(1000 * got["ingest_s"] / got["files"], 1),
           "interpreter_start_imports_warehouse_s": round(start, 2), "ingest_peak_rss_mb": round(ingest["peak_rss_mb"]),
           "ingest_parts_s": {k: round(v, 2) for k, v in got["parts_s"].items()},
           "result": [got["rows_read"], got["rows_loaded"], got["rows_rejected"], round(got["totals"]["energy_kwh"], 3)]}
    report(f"telemetry {shape} {MANY_FILES} files of 8 GPUs x {MANY_HOURS:g} h", out)
    target("telemetry", f"{shape} {MANY_FILES} small files: ingest throughput / parse scan", out["throughput_vs_parse_scan"],
           THROUGHPUT_TARGET, at_least=True, judged=False)
    target("telemetry", f"{shape} {MANY_FILES} small files: ingest time / one file of the same scrapes", out["many_over_one_file"],
           MANY_OVER_ONE_TARGET)
    return out


def main() -> None:
    for days in DAYS:
        for shape in ("prom", "csv"):
            case(shape, GPUS, days)
    for shape in ("prom", "csv"):
        one, ten = case(shape, LIN_GPUS, 1), case(shape, LIN_GPUS, 10)
        report(f"telemetry {shape} linearity", {
            "gpus": LIN_GPUS, "one_day_s": one["ingest_s"], "ten_days_s": ten["ingest_s"],
            "ratio_10d_over_1d": round(ten["ingest_s"] / one["ingest_s"], 2),
            "rss_1d_mb": one["ingest_peak_rss_mb"], "rss_10d_mb": ten["ingest_peak_rss_mb"],
            "targets": f"throughput_vs_parse_scan >= {THROUGHPUT_TARGET}, RSS < {RSS_TARGET_MB} MB, ratio ~10",
        })
    for shape in ("prom", "csv"):
        many_files(shape)
