"""dcgm-exporter Prometheus text exposition: one scrape per file, or many concatenated with
per-sample timestamps (as a federation or `promtool tsdb dump-openmetrics` writes them)."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from importlib.resources import files
from typing import Any

import duckdb

from pipelines.units import MJ_PER_KWH
from pipelines.warehouse import read_sql
from sources.base import Head, Reader, Staged, duck_error, register

SAMPLE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?\s+\S+(\s+-?\d+)?\s*$")
ISO_IN_NAME = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})[T_ -]?(\d{2})[:-]?(\d{2})[:-]?(\d{2})")
EPOCH_IN_NAME = re.compile(r"(?<!\d)(1[0-9]{9})(?:\d{3})?(?!\d)")
FIELDS_CSV = files("sources") / "dcgm_fields.csv"


def scrape_time(head: Head, option: str | None) -> tuple[datetime, str]:
    """When a scrape without sample timestamps was taken, and how we know (recorded per file)."""
    if option:
        return datetime.fromisoformat(option.replace("Z", "+00:00")).astimezone(timezone.utc).replace(tzinfo=None), "option"
    name = head.path.name
    if m := ISO_IN_NAME.search(name):
        return datetime(*map(int, m.groups())), "file_name"
    if m := EPOCH_IN_NAME.search(name):
        return datetime.fromtimestamp(int(m.group(1)), timezone.utc).replace(tzinfo=None), "file_name_epoch"
    mtime = head.path.stat().st_mtime
    return datetime.fromtimestamp(mtime, timezone.utc).replace(tzinfo=None), "file_mtime"


@register
class DcgmPromReader(Reader):
    kind = "dcgm-prom"
    table = "gpu_hour_parts"
    description = "dcgm-exporter Prometheus text scrape(s)"

    def sniff(self, head: Head) -> str | None:
        lines = [ln for ln in head.text.splitlines()[:200] if ln.strip()]
        dcgm = any(("DCGM_FI_" in ln or ln.startswith("dcgm_")) for ln in lines)
        samples = [ln for ln in lines if not ln.startswith("#")]
        if dcgm and samples and all(SAMPLE.match(ln) for ln in samples[:50]):
            return "text-0.0.4"
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        ts, basis = scrape_time(head, options.get("scrape_time"))
        con.execute("create or replace temp table _scrape as select ?::timestamp as scrape_ts", [ts])
        con.execute("create or replace temp table dcgm_fields as select * from read_csv(?, header = true, all_varchar = false)",
                    [str(FIELDS_CSV)])
        try:
            con.execute("""
                create or replace temp table raw_prom_lines as
                select row_number() over () as row_number, line
                from read_csv(?, columns = {'line': 'VARCHAR'}, header = false, delim = '\x01', quote = '',
                              escape = '', auto_detect = false, compression = 'auto')""", [str(head.path)])
        except duckdb.Error as exc:
            raise duck_error(head.path, exc) from None
        con.execute("create or replace temp table _staged as " + read_sql("10_staging", "stg_dcgm_prom__samples.sql"))
        con.execute("""insert into _rejects select row_number, e.column_name, e.check_name, e.value, e.message
                       from (select row_number, unnest(_errors) as e from _staged)""")
        rows_read = con.execute("select count(*) from _staged").fetchone()[0]
        has_ts = con.execute("select count(*) filter (where ts is distinct from (select scrape_ts from _scrape)) > 0 from _staged").fetchone()[0]
        notes = [] if has_ts else [f"scrape time from {basis}: {ts.isoformat()}Z"]
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or "text", notes=notes)

    def load(self, con: duckdb.DuckDBPyConnection, file_id: int) -> int:
        con.execute("insert into gpu_hour_parts select ?, * from (" + read_sql("10_staging", "stg_dcgm__gpu_hour_parts.sql") + ")", [file_id])
        con.execute("insert into gpu_pod_parts select ?, * from (" + read_sql("10_staging", "stg_dcgm__gpu_pod_parts.sql") + ")", [file_id])
        return con.execute("select count(*) from _staged anti join (select distinct row_number from _rejects) r using (row_number)").fetchone()[0]

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        gpus, samples_used, energy_mj = con.execute("""
            select count(distinct gpu_uuid), sum(n_energy + n_power + n_util + n_sm_active + n_tensor_active),
                   sum(e) from (
                select gpu_uuid, n_energy, n_power, n_util, n_sm_active, n_tensor_active, null as e from gpu_hour_parts where file_id = ?
                union all
                select gpu_uuid, 0, 0, 0, 0, 0, arg_max(last_energy_mj, last_energy_ts) - arg_min(first_energy_mj, first_energy_ts)
                from gpu_hour_parts where file_id = ? group by gpu_uuid)""", [file_id, file_id]).fetchone()
        loaded = con.execute("select count(*) from _staged anti join (select distinct row_number from _rejects) r using (row_number)").fetchone()[0]
        return {"gpus": gpus, "samples": loaded, "samples_used": int(samples_used or 0),
                "samples_other_metrics": loaded - int(samples_used or 0),
                "energy_kwh": float(energy_mj or 0) / MJ_PER_KWH}

    def remove(self, con: duckdb.DuckDBPyConnection, file_id: int) -> None:
        con.execute("delete from gpu_hour_parts where file_id = ?", [file_id])
        con.execute("delete from gpu_pod_parts where file_id = ?", [file_id])
