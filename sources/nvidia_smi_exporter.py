"""utkuozdemir/nvidia_gpu_exporter scrapes: Prometheus text of `nvidia_smi_*` gauges, one
scrape per file (or several with sample timestamps), the GPU labelled `uuid` and named only on
`nvidia_smi_gpu_info`. Read as dcgm-exporter text is (sources/dcgm_prom.py), a sample without
a time at the scrape's time from --scrape-time, the file's name or its mtime. Of its samples those of the
metrics sources/nvidia_smi_fields.csv names (power, utilisation) are rows, checked against that
file, and so is any line whose name is no metric name (a reject); the other gauges are not read,
and a note says how many.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import duckdb

from core.sql import fill, literal, one_row, sql_text
from sources.base import Head, Staged, register
from sources.dcgm_prom import COMMENT_LINE, SAMPLE, lines_view, scrape_time
from sources.nvidia_smi import NvidiaSmiReader, field_rows, text_lines

PROM_MODEL = "stg_dcgm_prom__samples.sql"
METRIC_NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*"


@register
class NvidiaSmiExporterReader(NvidiaSmiReader):
    kind = "nvidia-smi-exporter"
    description = "nvidia_gpu_exporter (nvidia_smi_*) Prometheus text"

    def sniff(self, head: Head) -> str | None:
        samples = [ln for ln in head.text.splitlines()[:400] if ln.strip() and not ln.startswith("#")]
        if samples and any(ln.startswith("nvidia_smi_") for ln in samples) and all(SAMPLE.match(ln) for ln in samples[:50]):
            return "text-0.0.4"
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        ts, basis = scrape_time(head, options.get("scrape_time"))
        scrape_ms = int((ts - datetime(1970, 1, 1)).total_seconds() * 1000)
        self.prepare(con)
        lines_view(con, [head])
        prom = sql_text("10_staging", PROM_MODEL)
        for view, row_number in (("_nvsmi_prom", "null::bigint"), ("_nvsmi_prom_numbered", "row_number() over ()")):
            con.execute(f"create or replace temp view {view} as " + fill(PROM_MODEL, prom, {
                "row_number": row_number, "comment_line": COMMENT_LINE, "scrape_ms": str(scrape_ms), "carried": ""}))
        con.execute("create or replace temp table _nvsmi_file as select ? as host", [options.get("host") or head.path.stem])
        con.execute("""create or replace temp table _nvsmi_info as
                       select prom_label(substr(series, strpos(series, '{') + 1), 'uuid') as uuid,
                              any_value(prom_label(substr(series, strpos(series, '{') + 1), 'name')) as name
                       from _nvsmi_prom where split_part(series, '{', 1) = 'nvidia_smi_gpu_info' group by all""")
        name = {"metric_name": literal(METRIC_NAME)}
        rows_read = self.stage_cells(con, head, "stg_nvidia_smi_exporter__samples.sql", {"prom": "_nvsmi_prom", **name},
                                     {"prom": "_nvsmi_prom_numbered", **name})
        expected, other = self.count(head)
        notes = [f"scrape time from {basis}: {ts.isoformat()}Z",
                 f"read {', '.join(r['name'] for r in field_rows('exporter'))}; {other} samples of other metrics not read"]
        mig = one_row(con, "select count(*) from _nvsmi_prom where split_part(series, '{', 1) = 'nvidia_smi_mig_mode_current' "
                           "and try_cast(value_text as double) = 1")[0]
        if mig:
            notes.append("MIG mode on: power is the whole GPU's, counted once")
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or "text", notes=notes, expected_rows=expected)

    def count(self, head: Head) -> tuple[int, int]:
        """Rows by a count without DuckDB (a sample of a metric read, or a line whose name is
        no metric name), and the samples of the other metrics."""
        read = {r["name"] for r in field_rows("exporter")}
        rows = other = 0
        with text_lines(head) as fh:
            for line in fh:
                if not line.strip() or line.lstrip(" ").startswith("#"):
                    continue
                metric = line.split("{", 1)[0] if "}" in line else line.strip().split(" ", 1)[0]
                if metric in read or not re.fullmatch(METRIC_NAME, metric):
                    rows += 1
                else:
                    other += 1
        return rows, other
