"""Slurm accounting (kind `slurm`): `sacct --parsable2` (`-P`) exports, `|` between fields, no
quoting, one line per job record: the allocation (123, 123_4 for an array task, 123+0 for a
heterogeneous component) and its steps (123.batch, 123.extern, 123.0).

With the header line (sacct's default) any --format order and any extra fields are read; with
--noheader the fields must be the documented order (NOHEADER_FORMAT, docs/inputs.md). Fields
read: JobID, JobName, User, Account, Partition, Cluster, AllocTRES (the GPU count), Start, End,
ElapsedRaw, NodeList, State, ConsumedEnergyRaw. Start and End are Slurm's local time: --timezone
names its zone (UTC otherwise, with a note). sacct's fixed-width table is refused with the fix.
"""
from __future__ import annotations

import re
from typing import Any

import duckdb

from core.errors import InputError
from core.sql import literal, one_row
from core.units import S_PER_H
from sources.base import Head, Reader, Staged, register
from sources.nvidia_smi import zone
from sources.tabular import stage_sql

# Canonical name -> sacct's field name (sacct matches field names without regard to case).
FIELDS: dict[str, str] = {
    "job_id": "JobID", "job_name": "JobName", "user_name": "User", "account": "Account",
    "partition": "Partition", "cluster": "Cluster", "alloc_tres": "AllocTRES", "elapsed_raw": "ElapsedRaw",
    "start_time": "Start", "end_time": "End", "node_list": "NodeList", "state": "State",
    "consumed_energy_raw": "ConsumedEnergyRaw",
}
REQUIRED = ("JobID", "Account", "AllocTRES", "Start", "End")
# The --format a --noheader export must have been written with (docs/inputs.md, "Slurm accounting").
NOHEADER_FORMAT = ("JobID", "JobName", "User", "Account", "Partition", "AllocTRES", "ElapsedRaw", "Start", "End",
                   "NodeList", "State", "ConsumedEnergyRaw")
JOB_ID = re.compile(r"^\d+([_+][\d\[\]\-,%]+)?(\.\w+)?$")
TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|Unknown|None)$")


def header_names(line: str) -> list[str] | None:
    """The header's field names when `line` is a --parsable2 header holding JobID and AllocTRES."""
    names = [n.strip() for n in line.rstrip("\r\n").split("|")]
    lower = {n.lower() for n in names}
    return names if {"jobid", "alloctres"} <= lower else None


def is_noheader_line(line: str) -> bool:
    """A data line in NOHEADER_FORMAT: a job id first, TRES sixth, times eighth and ninth."""
    cells = line.rstrip("\r\n").split("|")
    return (len(cells) == len(NOHEADER_FORMAT) and bool(JOB_ID.match(cells[0]))
            and bool(TIME.match(cells[7])) and bool(TIME.match(cells[8])) and ("=" in cells[5] or cells[5] == ""))


def is_fixed_width(lines: list[str]) -> bool:
    """sacct's default table: a header of names, then a line of dashes."""
    return (len(lines) > 1 and "|" not in lines[0] and "JobID" in lines[0].split()
            and set(lines[1].replace(" ", "")) == {"-"})


@register
class SacctReader(Reader):
    kind = "slurm"
    table = "slurm_jobs"
    description = "Slurm accounting (sacct --parsable2, with or without the header)"

    def sniff(self, head: Head) -> str | None:
        lines = [ln for ln in head.text.splitlines()[:3] if ln.strip()]
        if not lines:
            return None
        if header_names(lines[0]):
            return "parsable2"
        if is_noheader_line(lines[0]):
            return "parsable2-noheader"
        return "fixed-width" if is_fixed_width(lines) else None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        version = self.sniff(head)
        if version == "fixed-width":
            raise InputError(head.path, "sacct's fixed-width table, whose columns cut long values", "header",
                             "Export with sacct --parsable2 (-P) and the --format of docs/inputs.md")
        first = next(ln for ln in head.text.splitlines() if ln.strip())
        names = header_names(first) if version == "parsable2" else list(NOHEADER_FORMAT)
        assert names is not None
        position = {n.lower(): i for i, n in reversed(list(enumerate(names)))}
        missing = [f for f in REQUIRED if f.lower() not in position]
        if missing:
            raise InputError(head.path, f"missing sacct field{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                             "header", "Export with sacct --parsable2 --format=" + ",".join(NOHEADER_FORMAT))
        tz, assumed = zone(head, options)
        notes = ["Start and End read as UTC: sacct writes the cluster's local time; pass --timezone if it was not UTC"] if assumed else []
        skip = 1 if version == "parsable2" else 0
        cells = ", ".join(f"parts[{position[f.lower()] + 1}] as {c}" if f.lower() in position else f"null::varchar as {c}"
                          for c, f in FIELDS.items())
        con.execute("create or replace temp table _sacct_file as select ?::varchar as tz, ?::int as width",
                    [tz.strip("'"), len(names)])
        con.execute(f"""create or replace temp view raw_sacct as
            select row_number, len(parts) as _fields, {cells}
            from (select row_number() over () as row_number, string_split(line, '|') as parts
                  from read_csv({literal(str(head.path))}, columns = {{'line': 'VARCHAR'}}, header = false, skip = {skip},
                                delim = '\\x01', quote = '', escape = '', comment = '', auto_detect = false,
                                compression = '{'gzip' if head.gzip else 'none'}')
                  where trim(line) <> '')""")
        rows_read = stage_sql(con, head.path, "stg_slurm__jobs.sql")
        return Staged(rows_read=rows_read, format_version=version or "parsable2", notes=notes)

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        jobs, steps, gpu_hours = one_row(con, """
            select count(*) filter (where not is_step), count(*) filter (where is_step),
                coalesce(sum(gpus * date_diff('second', start_utc, end_utc)) filter (where not is_step), 0) / ?
            from slurm_jobs where file_id = ?""", [S_PER_H, file_id])
        return {"jobs": jobs, "steps": steps, "gpu_hours": float(gpu_hours or 0)}
