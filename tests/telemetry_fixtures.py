"""Synthetic DCGM traces with known energy, written in the real input shapes."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

EPOCH = datetime(1970, 1, 1)
LABELS = 'gpu="{i}",UUID="{uuid}",pci_bus_id="00000000:{bus:02X}:00.0",device="nvidia{i}",modelName="NVIDIA A100-SXM4-80GB",Hostname="node-a"'


@dataclass
class Trace:
    """One GPU sampled every `interval_s`; power in W per sample; counter in mJ since reload."""
    uuid: str
    start: datetime
    interval_s: int
    power_w: list[float]
    counter0_mj: int = 5_000_000_000
    resets_at: set[int] = field(default_factory=set)     # sample indexes where the driver reloaded
    drop: set[int] = field(default_factory=set)          # sample indexes never scraped (gaps)
    extra_labels: str = ""

    def samples(self):
        """(ts, power, counter) for every scraped sample; the counter integrates every interval."""
        c = self.counter0_mj
        for k, p in enumerate(self.power_w):
            if k in self.resets_at:
                c = 0
            c += int(round(p * self.interval_s * 1000))
            if k not in self.drop:
                yield self.start + timedelta(seconds=k * self.interval_s), p, c

    def true_kwh(self) -> float:
        """Energy the board drew over the trace (power x interval, mJ -> kWh)."""
        return sum(round(p * self.interval_s * 1000) for p in self.power_w[1:]) / 3.6e9

    def labels(self, i: int = 0) -> str:
        return LABELS.format(i=i, uuid=self.uuid, bus=16 + i) + self.extra_labels


def ms(ts: datetime) -> int:
    return int((ts - EPOCH).total_seconds() * 1000)


def write_prom_text(path: Path, traces: list[Trace]) -> Path:
    lines = []
    for i, t in enumerate(traces):
        for ts, p, c in t.samples():
            lines.append(f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{t.labels(i)}}} {c} {ms(ts)}")
            lines.append(f"DCGM_FI_DEV_POWER_USAGE{{{t.labels(i)}}} {p:.3f} {ms(ts)}")
    path.write_text("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
                    + "\n".join(lines) + "\n")
    return path


def write_long_csv(path: Path, traces: list[Trace]) -> Path:
    rows = ["timestamp,__name__,Hostname,UUID,gpu,modelName,namespace,pod,value"]
    for i, t in enumerate(traces):
        for ts, p, c in t.samples():
            iso = ts.strftime("%Y-%m-%dT%H:%M:%SZ")
            rows.append(f"{iso},DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION,node-a,{t.uuid},{i},NVIDIA A100-SXM4-80GB,,,{c}")
            rows.append(f"{iso},DCGM_FI_DEV_POWER_USAGE,node-a,{t.uuid},{i},NVIDIA A100-SXM4-80GB,,,{p:.3f}")
    path.write_text("\n".join(rows) + "\n")
    return path


def write_query_range(path: Path, traces: list[Trace]) -> Path:
    result = []
    for i, t in enumerate(traces):
        base = {"Hostname": "node-a", "UUID": t.uuid, "gpu": str(i), "modelName": "NVIDIA A100-SXM4-80GB"}
        samples = list(t.samples())
        result.append({"metric": {"__name__": "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", **base},
                       "values": [[ms(ts) / 1000, str(c)] for ts, _, c in samples]})
        result.append({"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", **base},
                       "values": [[ms(ts) / 1000, f"{p:.3f}"] for ts, p, _ in samples]})
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    return path


def located_rejects(warehouse: Path) -> list[tuple]:
    """(row, check) of every reject in a warehouse, in row order."""
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute("select row_number, check_name from rejects order by row_number, check_name").fetchall()
    con.close()
    return rows


def rows_of(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    """A query's rows in a fixed order, doubles made stable: for comparing two warehouses."""
    return sorted((tuple(stable(v) for v in row) for row in con.execute(sql).fetchall()), key=repr)


def stable(v: Any) -> Any:
    """Doubles to ten significant digits: summation order may differ between two reads."""
    if isinstance(v, float):
        return float(f"{v:.10g}")
    if isinstance(v, dict):
        return repr({k: stable(x) for k, x in sorted(v.items())})
    if isinstance(v, list):
        return tuple(stable(x) for x in v)
    return v


def ingested(warehouse: Path, path: Path, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Ingest one telemetry file into a new warehouse: what was loaded, to the last located
    reject, doubles made stable (for holding two ways of reading a file to the same result)."""
    import pipelines.ingest as runner
    from pipelines.warehouse import connect
    warehouse.unlink(missing_ok=True)
    with connect(warehouse) as con:
        r = runner.ingest(con, [path], options=options)[0]
        got: dict[str, Any] = {"result": (r.kind, r.rows_read, r.rows_loaded, r.rows_rejected, stable(r.totals))}
        for table in ("gpu_hour_parts", "gpu_pod_parts"):
            got[table] = rows_of(con, f"select * exclude (file_id) from {table}")
        got["rejects"] = rows_of(con, "select row_number, column_name, check_name, value, message from rejects")
    return got
