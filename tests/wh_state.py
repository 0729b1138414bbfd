"""What a warehouse holds, as plain values, so tests can say "unchanged", "as before or as after
that file" and "the same totals as one clean load" without caring about file ids or load times."""
from __future__ import annotations

from pathlib import Path

import duckdb

FACT_TABLES = ("charges", "findings", "gpu_hour_parts", "gpu_pod_parts", "runs", "disclosures")


def content(wh: Path) -> dict:
    """Totals of the live (status = loaded) content: what a report would see. Paths and ids left out."""
    con = duckdb.connect(str(wh), read_only=True)
    try:
        q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        return {
            "files": sorted(q("select sha256, kind, rows_read, rows_loaded, rows_rejected from source_files "
                              "where status = 'loaded'")),
            "charges": q("select billing_currency, count(*), sum(billed_cost), sum(effective_cost), sum(list_cost), "
                         "round(sum(gpu_hours), 6) from charges group by all order by all"),
            "rejects": q("select r.check_name, count(*) from rejects r join source_files f using (file_id) "
                         "where f.status = 'loaded' group by all order by all"),
            "findings": q("select finding, sum(rows) from findings join source_files f using (file_id) "
                          "where f.status = 'loaded' group by all order by all"),
            "gpu": q("select count(*), count(distinct gpu_uuid), sum(n_scrapes) from gpu_hour_parts"),
            "runs": q("select count(*), round(sum(energy_kwh), 9), round(sum(emissions_kg), 9) from runs"),
            "disclosures": q("select count(*) from disclosures"),
        }
    finally:
        con.close()


def snapshot(wh: Path) -> dict:
    """Everything, row counts of every table and the lineage as stored: for "unchanged"."""
    live = content(wh)
    con = duckdb.connect(str(wh), read_only=True)
    try:
        out = {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in ("source_files", "rejects", *FACT_TABLES)}
        out["lineage"] = con.execute("select file_id, path, sha256, status, rows_read, rows_loaded, rows_rejected, "
                                     "replaced_by from source_files order by file_id").fetchall()
        out["content"] = live
        return out
    finally:
        con.close()
