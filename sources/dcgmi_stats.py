"""DCGM job statistics (kind `dcgmi-stats`): the text `dcgmi stats --job <id> --verbose` prints
(typically from a Slurm epilogue, after `--jstop`): `Successfully retrieved statistics for job:
<id>.`, then one box per GPU (`| GPU ID: 0`), or one `| Summary` box without --verbose, each with
`| <field> | <value> |` lines under Execution, Performance, Event and Slowdown sections. Read:
Start Time, End Time, Total Execution Time (sec), Energy Consumed (Joules), Power Usage (Watts) Avg,
SM and Memory Utilization (%) Avg. Several jobs' outputs may be concatenated in one file.
Times are the host's local time (--timezone). The output names no host: the job id ties it to its
Slurm job, whose NodeList says where it ran.
"""
from __future__ import annotations

import re
from typing import Any

import duckdb

from core.errors import InputError
from sources.base import Head, Reader, Staged, register
from sources.nvidia_smi import text_lines, zone
from sources.reference_data import read_rows
from sources.tabular import stage_sql

JOB_LINE = re.compile(r"Successfully retrieved statistics for job:\s*(?P<job>\S+?)\.?\s*$")
BLOCK = re.compile(r"^\|\s*(GPU ID:\s*(?P<gpu>\d+)|Summary)\s*\|?\s*$")
FIELD = re.compile(r"^\|\s*(?P<name>[^|]*?)\s*\|\s*(?P<value>[^|]*?)\s*\|\s*$")
# dcgmi's row name -> column; "Avg: x, Max: y, Min: z" values keep their Avg
FIELDS = {"Start Time": "start_time", "End Time": "end_time", "Total Execution Time (sec)": "execution_s",
          "Energy Consumed (Joules)": "energy_j", "Power Usage (Watts)": "power_w_avg",
          "SM Utilization (%)": "sm_util_avg", "Memory Utilization (%)": "mem_util_avg"}
COLUMNS = ("job_id", "gpu_id", *FIELDS.values())


def average(value: str) -> str:
    m = re.match(r"Avg:\s*([^,]+)", value)
    return m.group(1).strip() if m else value


def blocks(lines: Any) -> list[dict[str, Any]]:
    """One dict per GPU (or Summary) box, with the job id of the output it is in."""
    out: list[dict[str, Any]] = []
    job: str | None = None
    for line in lines:
        line = line.rstrip("\r\n")
        m = JOB_LINE.search(line)
        if m:
            job = m.group("job")
            continue
        b = BLOCK.match(line)
        if b:
            out.append({"job_id": job, "gpu_id": int(b.group("gpu")) if b.group("gpu") else None})
            continue
        f = FIELD.match(line)
        if f and out and f.group("name") in FIELDS:
            out[-1][FIELDS[f.group("name")]] = average(f.group("value"))
    return out


def max_power_w() -> float:
    """The most a GPU can draw on average: the top of gpu_specs' highest TDP range x power_w_max."""
    top = max(float(r["high"]) for r in read_rows("gpu_specs") if r["metric"] == "tdp_w")
    limit = next(float(r["value"]) for r in read_rows("telemetry_limits") if r["limit_id"] == "power_w_max")
    return top * limit


@register
class DcgmiStatsReader(Reader):
    kind = "dcgmi-stats"
    table = "dcgm_job_stats"
    description = "DCGM job statistics (dcgmi stats --job --verbose)"

    def sniff(self, head: Head) -> str | None:
        lines = head.text.splitlines()[:40]
        if any(JOB_LINE.search(ln) for ln in lines[:5]) and any(BLOCK.match(ln.rstrip()) for ln in lines):
            return "verbose" if any("GPU ID:" in ln for ln in lines) else "summary"
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        with text_lines(head) as fh:
            found = blocks(fh)
        if not found:
            raise InputError(head.path, "no GPU statistics in the dcgmi stats output", "no '| GPU ID:' or '| Summary' box",
                             "Save the output of dcgmi stats --job <id> --verbose after --jstop")
        tz, assumed = zone(head, options)
        notes = ["Start and End Time read as UTC: dcgmi prints the host's local time; pass --timezone if it was not UTC"] \
            if assumed else []
        rows = [(i + 1, *(str(b[c]) if b.get(c) is not None else None for c in COLUMNS)) for i, b in enumerate(found)]
        con.execute("create or replace temp table raw_dcgmi_stats (row_number bigint, "
                    + ", ".join(f"{c} varchar" for c in COLUMNS) + ")")
        con.executemany(f"insert into raw_dcgmi_stats values ({', '.join('?' * (len(COLUMNS) + 1))})", rows)
        con.execute("update raw_dcgmi_stats set gpu_id = nullif(gpu_id, 'None')")
        con.execute("create or replace temp table _dcgmi_file as select ?::varchar as tz, ?::varchar as host, ?::double as max_power_w",
                    [tz.strip("'"), options.get("host"), max_power_w()])
        missing = [r for r in rows if r[1] is None]
        if missing:
            raise InputError(head.path, "GPU statistics before any 'Successfully retrieved statistics for job:' line",
                             f"box {missing[0][0]}", "Save dcgmi stats output whole, its first line included")
        rows_read = stage_sql(con, head.path, "stg_dcgmi__job_stats.sql")
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or "verbose", notes=notes)

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        jobs, gpus, energy_j = con.execute("select count(distinct job_id), count(*), coalesce(sum(energy_j), 0) "
                                           "from dcgm_job_stats where file_id = ?", [file_id]).fetchone() or (0, 0, 0)
        return {"jobs": jobs, "gpu_blocks": gpus, "energy_j": float(energy_j)}
