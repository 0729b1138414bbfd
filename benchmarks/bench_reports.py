"""Chargeback rendering at 200 teams: the monthly PDF and one statement per team.

Builds the demo month's report context once from a throwaway warehouse, then widens it to a
synthetic 200-team month (each team a copy of a demo team under a new name, with scaled figures),
and times write-out through the same code path as `meterbook report chargeback --per-team`.
Target (issue 24): under a minute of wall time on a 2-core machine with nothing else running;
the load average printed beside it says how busy the machine was.
"""
from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import BENCH_DIR, report, target

TEAMS = 200
TARGET_S = 60


def synthetic_context(ctx: dict, teams: int) -> dict:
    """ctx with `teams` team pages: demo teams copied round-robin, renamed and scaled."""
    pages = ctx["team_pages"]
    out = copy.copy(ctx)
    out["team_pages"], out["teams"] = [], []
    for i in range(teams):
        page = copy.deepcopy(pages[i % len(pages)])
        t = page["team"]
        t["team"] = f"team-{i:03d}"
        scale = 1 + (i % 17) / 10
        for k in ("billed_cost", "effective_cost", "list_cost"):
            t[k] = t[k] * type(t[k])(str(scale)) if t[k] is not None else None
        out["team_pages"].append(page)
        out["teams"].append(t)
    # a finding on one synthetic team, shaped as the demo's own (the templates read every field)
    like = ctx["findings"][0] if ctx["findings"] else {}
    out["findings"] = ctx["findings"] + [{**like, "finding": "most_idle", "subject": "team-007", "message": "synthetic",
                                          "paying_team": "team-007", "paying_teams": []}]
    return out


def _cpu() -> float:
    """CPU seconds of this process and every process below it, live or ended. The render workers
    are children of the fork server, not of this process, so getrusage(RUSAGE_CHILDREN) misses
    them; /proc counts each live process's own time and that of the children it has reaped."""
    tick = os.sysconf("SC_CLK_TCK")
    pids, total = [os.getpid()], 0.0
    while pids:
        pid = pids.pop()
        try:
            # fields after the command: utime, stime, cutime, cstime are the 12th-15th
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15]) / tick
            for task in os.listdir(f"/proc/{pid}/task"):
                pids += [int(c) for c in open(f"/proc/{pid}/task/{task}/children").read().split()]
        except OSError:
            pass    # ended meanwhile: its time is in its parent's reaped children
    return total


def main() -> None:
    from pipelines.config import load_config
    from pipelines.stages import run_stages
    from pipelines.warehouse import connect
    from reports import chargeback as cb
    from reports import charts
    work = Path(tempfile.mkdtemp(dir=BENCH_DIR if BENCH_DIR.exists() else None))
    demo = work / "demo"
    subprocess.run([sys.executable, "-m", "pipelines.cli", "demo", "--out", str(demo)], check=True, capture_output=True)
    wh = work / "wh.duckdb"
    subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", str(demo / "billing"), str(demo / "dcgm"),
                    "--warehouse", str(wh)], check=True, capture_output=True)
    con = connect(wh)
    config = load_config(demo / "meterbook.toml")
    run_stages(con, config)      # the build step every report runs first (ingest builds no mart)
    t0 = time.perf_counter()
    ctx = cb.build_context(con, config, "2026-10")
    t_ctx = time.perf_counter() - t0
    big = synthetic_context(ctx, TEAMS)
    big["cost_chart"] = charts.bar_chart_svg(*cb.top_n(big["teams"], "billed_cost"), "billed cost")
    big["energy_chart"] = charts.bar_chart_svg(*cb.top_n(big["teams"], "co2e_kg"), "CO2e, kg")
    out = work / "reports"
    load = os.getloadavg()[0]
    cpu0 = _cpu()
    t0 = time.perf_counter()
    paths = cb.render_all(big, out, per_team=True)
    t_render = time.perf_counter() - t0
    cpu = _cpu() - cpu0
    import pikepdf
    with pikepdf.open(paths[0]) as pdf:
        pages = len(pdf.pages)
    # issue 24: every report PDF passes qpdf's check (cross-reference table, streams, page
    # contents), the joined main report and each statement alike
    unsound = {}
    pdfs = [p for p in paths if p.suffix == ".pdf"]
    for path in pdfs:
        with pikepdf.open(path) as pdf:
            if found := pdf.check_pdf_syntax():
                unsound[path.name] = found[:3]
    statements = [p.stat().st_size for p in paths if p.parent.name == "teams"]
    report("chargeback_200_teams", {
        "teams": TEAMS, "cpus": os.cpu_count(), "load_average_before": round(load, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "context_s (demo month, warehouse)": round(t_ctx, 2),
        "render_s (main + 200 statements)": round(t_render, 1),
        # CPU seconds over this process and its workers: wall time on a busy machine says little,
        # CPU / cores is the floor on an idle one.
        "render_cpu_s": round(cpu, 1),
        "main_pdf_pages": pages, "statements": len(statements),
        "main_pdf_mb": round(paths[0].stat().st_size / 1e6, 2),
        "statement_kb_mean": round(sum(statements) / len(statements) / 1e3, 1),
        "statements_mb_total": round(sum(statements) / 1e6, 1),
        "pdfs_checked_by_qpdf": len(pdfs), "pdfs_with_qpdf_findings": unsound,
    })
    target("reports", f"main + {TEAMS} statements, wall", t_render, TARGET_S, "s")
    target("reports", f"PDFs (of {len(pdfs)}) with qpdf --check findings", len(unsound), 0)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
