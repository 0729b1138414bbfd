"""meterbook: the thin command line. Library errors become one `Error:` line and exit code 1."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

from core.errors import InputError
from core.sql import one_row
from core.text import printable
from pipelines.cli_support import LazyGroup, user_errors
from pipelines.config import example_text
from pipelines.warehouse import DEFAULT_WAREHOUSE
from sources import REGISTRY

KINDS = ["auto", *REGISTRY]   # the readers themselves: a new reader is a new --kind


def warehouse_option(fn):
    return click.option("--warehouse", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_WAREHOUSE,
                        show_default=True, help="DuckDB warehouse file.")(fn)


def config_option(fn):
    return click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        help="meterbook.toml with team mappings (default: ./meterbook.toml if present).")(fn)


def engine_options(fn):
    fn = click.option("--spark-warehouse", default=None,
                      help="Spark engine: the Parquet warehouse URI (default: [engine] warehouse, else build/spark-warehouse).")(fn)
    return click.option("--engine", type=click.Choice(["duckdb", "spark"]), default=None,
                        help="Where the work runs (default: [engine] name in meterbook.toml, else duckdb).")(fn)


def _engine(engine: str | None, config) -> str:
    return engine or config.engine.name


def _config(path: Path | None):
    """The --config file, else ./meterbook.toml, else the defaults (see _said_defaults)."""
    from pipelines.config import load_config
    if path is None and Path("meterbook.toml").exists():
        path = Path("meterbook.toml")
    return load_config(path)


def _said_defaults(config) -> None:
    """After a report or export: say on stderr that no config was used, since a forgotten
    --config leaves every namespace and host unmapped (said last, so an error stays one line)."""
    if config.path is None:
        click.echo("Note: no --config and no ./meterbook.toml: the defaults were used (tag keys team, cost-center, project; "
                   "no namespace, account or host mappings). See `meterbook config check`.", err=True)


def _open(warehouse: Path, read_only: bool = False):
    """An existing warehouse: only ingest creates one. Closed when the command ends, failed or
    not: run in-process (tests, a notebook), a failed command's traceback would otherwise keep
    the file open, and the next connection to it with other settings is refused."""
    from pipelines.warehouse import connect
    con = connect(warehouse, read_only=read_only, create=False)
    if (ctx := click.get_current_context(silent=True)) is not None:
        ctx.call_on_close(con.close)
    return con


def _verbatim(text: str) -> str:
    """Text click prints as written: \\b before each paragraph stops its re-wrapping (a wrapped
    comment would no longer be TOML when pasted)."""
    return "\n\n".join("\b\n" + block for block in text.strip("\n").split("\n\n"))


@click.group(cls=LazyGroup, lazy={"reconstruct": "pipelines.reconstruct.cli.reconstruct"},
             epilog="Example: meterbook ingest exports/ telemetry/ && meterbook report chargeback --month 2026-10\n\n"
                    "Configuration (meterbook.toml; this example is pipelines/meterbook.example.toml, "
                    "check yours with `meterbook config check`):\n\n" + _verbatim(example_text()))
@click.version_option(package_name="meterbook")
def main() -> None:
    """Audit the three meters of AI compute: dollars, kWh and kg CO2e."""


@main.command()
@click.option("--month", default="2026-10", show_default=True, help="Month to generate, YYYY-MM.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("build/demo"), show_default=True)
@click.option("--gpus", type=int, default=None, help="Scale the telemetry fleet to this many GPUs (benchmarks).")
@click.option("--interval", type=int, default=30, show_default=True, help="DCGM scrape interval, seconds.")
@user_errors
def demo(month: str, out: Path, gpus: int | None, interval: int) -> None:
    """Write a deterministic demo month in the real input formats.

    Example: meterbook demo --month 2026-10 --out build/demo/2026-10
    """
    from pipelines.demo import write_demo
    written = write_demo(out, month, gpus=gpus, interval_s=interval)
    for p in written:
        click.echo(f"wrote {p}")


@main.command()
@click.argument("paths", nargs=-1, type=str)
@click.option("--prometheus", "prometheus_url", default=None, metavar="URL",
              help="Pull DCGM telemetry from this Prometheus API (http(s)://HOST:PORT[/path]; also prometheus://... as a "
                   "path, or [prometheus] url). Credentials: MB_PROMETHEUS_TOKEN, or MB_PROMETHEUS_USER and MB_PROMETHEUS_PASSWORD.")
@click.option("--month", default=None, help="Prometheus pull: the month to pull, YYYY-MM (UTC).")
@click.option("--from", "from_", default=None, help="Prometheus pull: start, ISO 8601 UTC (with --to).")
@click.option("--to", default=None, help="Prometheus pull: end, ISO 8601 UTC.")
@click.option("--max-points", type=click.IntRange(min=1), default=None, help="Prometheus pull: points per series per query.")
@click.option("--max-samples", type=click.IntRange(min=1), default=None,
              help="Prometheus pull: points per query over all series (the server's --query.max-samples).")
@click.option("--kind", type=click.Choice(KINDS), default="auto", show_default=True, help="Input format; auto detects it.")
@click.option("--scrape-time", default=None, help="Scrape time (ISO 8601, UTC) for Prometheus text without timestamps.")
@click.option("--start", default=None, help="dcgmi / nvidia-smi dmon logs without times: ISO 8601 UTC time of the first sample.")
@click.option("--interval", default=None, type=float,
              help="dcgmi / nvidia-smi dmon logs without times: seconds between samples (dmon -d; dcgmi's is in ms).")
@click.option("--timezone", default=None,
              help="IANA zone of CodeCarbon's and nvidia-smi's local timestamps (default: each run's country; UTC).")
@click.option("--query-gpu", default=None,
              help="nvidia-smi CSV logged with noheader: the --query-gpu field list it was written with.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a result per file.")
@click.option("--keep-going", is_flag=True, help="After a file that fails, go on with the next ones (default: stop there).")
@warehouse_option
@config_option
@engine_options
@user_errors
def ingest(paths: tuple[str, ...], prometheus_url: str | None, month: str | None, from_: str | None, to: str | None,
           max_points: int | None, max_samples: int | None, kind: str, scrape_time: str | None, start: str | None,
           interval: float | None, timezone: str | None, query_gpu: str | None, as_json: bool, keep_going: bool, warehouse: Path,
           config_path: Path | None, engine: str | None, spark_warehouse: str | None) -> None:
    """Load billing exports, DCGM telemetry and runs into the warehouse.

    Folders are read recursively. A file already loaded (same sha256) is reported `unchanged`.
    Each file is committed or rolled back whole; the first file that fails stops the run
    (--keep-going: tries the rest), and every file's status is printed: loaded, unchanged,
    failed (with its Error) or not tried. Exit code 1 if any failed.

    A prometheus:// URL (or --prometheus, or [prometheus] url with --month) pulls the month's
    DCGM series from that server; hours already pulled are not fetched again, and a pull that
    fails leaves the warehouse as it was.

    Example: meterbook ingest exports/focus-2026-10.csv telemetry/ --json

    Example: meterbook ingest prometheus://prometheus.monitoring:9090 --month 2026-10
    """
    from pipelines.ingest import FileStatus, ingest_each, into_warehouse, print_progress
    from pipelines.prometheus_ingest import make_pull, pull
    config = _config(config_path)
    options = {"scrape_time": scrape_time, "timezone": timezone, "start": start, "interval": interval, "query_gpu": query_gpu}
    urls = [p for p in paths if p.startswith("prometheus://")] + ([prometheus_url] if prometheus_url else [])
    files = [p for p in paths if not p.startswith("prometheus://")]
    if not urls and (month or from_ or to) and config.prometheus.url:
        urls = [config.prometheus.url]
    if not urls and (month or from_ or to):
        raise InputError("--month", "is for a Prometheus pull", "no prometheus:// URL, --prometheus or [prometheus] url",
                         "Name the server, or leave --month/--from/--to out")
    if not files and not urls:
        raise InputError("meterbook ingest", "nothing to ingest", "no path", "Name files or folders, or a prometheus://HOST:PORT URL with --month")
    pulls = [make_pull(u, config, month, from_, to, max_points, max_samples) for u in urls]
    outcomes: list
    if pulls and _engine(engine, config) == "spark":
        raise InputError("prometheus", "not available with --engine spark", "", "Pull with the duckdb engine")
    if _engine(engine, config) == "spark":
        if keep_going:
            raise InputError("--keep-going", "not available with --engine spark", "",
                             "Run without it, or ingest with the duckdb engine")
        from pipelines.spark import engine as spark_engine
        store = spark_engine.open_store(config, spark_warehouse)
        outcomes = spark_engine.ingest(store, paths, kind, options, config)
        where = store.root
    else:
        progress = None if as_json else print_progress

        def run(con) -> list:
            done = ingest_each(con, files, kind, options, progress, config, keep_going) if files else []
            for p in pulls:
                if keep_going or not any(isinstance(r, FileStatus) for r in done):
                    done += pull(con, p, progress, config)
            return done
        outcomes = into_warehouse(warehouse, run)
        where = str(warehouse) if warehouse.exists() else f"{warehouse} not created"
    failed = [r for r in outcomes if isinstance(r, FileStatus) and r.status == "failed"]
    if as_json:
        click.echo(json.dumps({"files": [r.as_json() for r in outcomes]}, indent=2, default=str))
        for r in failed:                  # as the progress says them without --json
            click.echo(f"Error: {r.error}", err=True)
    else:
        counts = Counter(r.status for r in outcomes)
        said = [f"{counts[s]} {s}" for s in ("loaded", "unchanged")] + [f"{counts[s]} {s}" for s in ("failed", "rolled back", "not tried") if counts[s]]
        click.echo(f"{len(outcomes)} files: {', '.join(said)}; warehouse {where}")
    if failed:
        sys.exit(1)


@main.command()
@warehouse_option
@click.option("--json", "as_json", is_flag=True)
@user_errors
def validate(warehouse: Path, as_json: bool) -> None:
    """Summarise data quality: files, rows, rejects by check, telemetry coverage.

    Example: meterbook validate --warehouse build/meterbook.duckdb
    """
    from pipelines.quality import quality_summary
    summary = quality_summary(_open(warehouse, read_only=True))
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=str))
        return
    click.echo(f"{summary['files']} files, {summary['rows_read']} rows read, {summary['rows_loaded']} loaded, "
               f"{summary['rows_rejected']} rejected")
    for r in summary["rejects_by_check"]:
        click.echo(printable(f"  {r['rows']:>8} rejected  {r['check_name']} ({r['column_name']}) in {r['file']}"))
    for r in summary["row_findings_by_check"]:
        click.echo(printable(f"  {r['rows']:>8} loaded, a cell left empty  {r['check_name']} ({r['column_name']}) in {r['file']}"))


def build_marts(warehouse: Path, config_path: Path | None, overrides=None, progress=None):
    """The one build step every report and export runs first: stages and marts from what is
    loaded, with the config applied (and `overrides` of its fields, from command options: a
    function of the config to the fields it changes). Without --config or ./meterbook.toml it is
    the config the warehouse was last built with, never silent defaults. Returns the open
    connection for the reader that follows, and the config. The warehouse must exist (a
    misspelled path is an error, not a new warehouse)."""
    import dataclasses

    from pipelines.stages import run_stages
    con = _open(warehouse)
    config, text = _effective_config(con, config_path)
    if overrides:
        config = dataclasses.replace(config, **overrides(config))
    from pipelines.spark import is_spark_built
    if not is_spark_built(con):   # a Spark build published these marts; its facts are in Spark
        run_stages(con, config, progress, config_text=text)
    return con, config


def _effective_config(con, config_path: Path | None):
    """(config, its text): the --config file, else ./meterbook.toml, else the one recorded at the
    warehouse's last build, else the defaults (text None: read from the file, or none)."""
    if config_path is None and not Path("meterbook.toml").exists():
        from pipelines.stages import recorded_config
        if (recorded := recorded_config(con)) is not None:
            return recorded
    return _config(config_path), None


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: the months built, rebuilt and kept.")
@warehouse_option
@config_option
@engine_options
@user_errors
def build(as_json: bool, warehouse: Path, config_path: Path | None, engine: str | None, spark_warehouse: str | None) -> None:
    """Build the marts (allocation, team month, findings, energy tiers...) from what is loaded.

    Reports and exports run this themselves; run it alone to check the contracts after an ingest.
    With --engine spark the stages run on Spark and the marts are published to --warehouse.

    Example: meterbook build --config meterbook.toml --warehouse build/meterbook.duckdb
    """
    from pipelines.progress import BuildProgress
    config = _config(config_path)
    progress = BuildProgress()
    if _engine(engine, config) == "spark":
        from pipelines.spark import engine as spark_engine
        store = spark_engine.open_store(config, spark_warehouse)
        spark_engine.build(store, config, warehouse, progress)
    con, config = build_marts(warehouse, config_path, progress=progress)
    months = [r[0] for r in con.execute("select distinct month from team_month order by 1").fetchall()]
    broken = one_row(con, "select count(*) from contract_findings")[0]
    scope = progress.scope
    rebuilt = scope.rebuilt if scope else months
    if as_json:
        click.echo(json.dumps({"months": months, "rebuilt": rebuilt, "removed": scope.removed if scope else [],
                               "previous_month_updated": progress.patched, "full": scope.full if scope else True,
                               "contract_findings": broken, "model_seconds": dict(sorted(progress.seconds.items()))}))
    else:
        kept = [m for m in months if m not in rebuilt]
        click.echo(f"built marts for {', '.join(months) or 'no month'} (rebuilt {', '.join(rebuilt) or 'none'}"
                   f"{'; unchanged ' + ', '.join(kept) if kept else ''}); {broken} contract findings; warehouse {warehouse}")
    _said_defaults(config)


@main.group()
def report() -> None:
    """Render the monthly reports (PDF, with CSV beside them)."""


@report.command("chargeback")
@click.option("--month", required=True, help="Month, YYYY-MM.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default build/reports/<month>).")
@click.option("--per-team", is_flag=True, help="Also write one statement PDF per team (only that team's data) to <out>/teams/.")
@warehouse_option
@config_option
@user_errors
def report_chargeback(month: str, out: Path | None, per_team: bool, warehouse: Path, config_path: Path | None) -> None:
    """Chargeback PDF/A and CSV: cost per team, GPU-hours, energy, CO2e, reconciled to the bill.

    Example: meterbook report chargeback --month 2026-10 --per-team --out build/reports/2026-10
    """
    from reports.chargeback import write_chargeback
    out = out or Path("build/reports") / month
    con, config = build_marts(warehouse, config_path)
    paths = write_chargeback(con, config, month, out, per_team=per_team)
    for p in paths:
        click.echo(f"wrote {p}")
    _said_defaults(config)


@report.command("audit")
@click.option("--model", "models", multiple=True, help="Only disclosures of this model (repeatable; default all).")
@click.option("--month", default=None, help="Also audit the month's team footprints (YYYY-MM).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default build/reports/audit, or build/reports/<month> with --month).")
@warehouse_option
@config_option
@user_errors
def report_audit(models: tuple[str, ...], month: str | None, out: Path | None, warehouse: Path,
                 config_path: Path | None) -> None:
    """Footprint-audit PDF/A: reported vs reconstructed meters with ranges, tornado charts, findings.

    Example: meterbook report audit --model Acme-Embed-1B --month 2026-10 --out build/reports/audit
    """
    from reports.audit import write_audit
    out = out or Path("build/reports") / (month or "audit")
    # every figure of the audit is a mart's, disclosures' reconstructions included
    con, config = build_marts(warehouse, config_path)
    if month:
        from reports.chargeback import require_month
        require_month(con, month)   # refused as the chargeback refuses it
    for p in write_audit(con, config, list(models), month, out):
        click.echo(f"wrote {p}")
    _said_defaults(config)


@report.command("disclosure")
@click.option("--month", default=None, help="Month, YYYY-MM.")
@click.option("--period", default=None, help="Months A..B, e.g. 2026-09..2026-10 (instead of --month).")
@click.option("--job", default=None, help="A job_id of the work log.")
@click.option("--model", default=None, help="A model: its training jobs (job_id NAME or NAME-*), instead of --job.")
@click.option("--format", "fmt", type=click.Choice(["ai-act", "spdx", "cyclonedx", "sci"]), required=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("build/reports/disclosures"),
              show_default=True, help="Output folder.")
@warehouse_option
@config_option
@user_errors
def report_disclosure(month: str | None, period: str | None, job: str | None, model: str | None, fmt: str, out: Path,
                      warehouse: Path, config_path: Path | None) -> None:
    """A training run's compute, energy and CO2e as a disclosure states them: AI Act Annex XI
    (Markdown + JSON), SPDX 3.0.1 AI, CycloneDX 1.6 model card, or SCI scores.

    Example: meterbook report disclosure --month 2026-10 --job acme-embed-1b-pretrain --format ai-act
    """
    from reports.disclosure import write_disclosure
    if (month is None) == (period is None) or (job is None) == (model is None):
        raise click.UsageError("give one of --month or --period, and one of --job or --model")
    first, _, last = (period or f"{month}..{month}").partition("..")
    con, _config = build_marts(warehouse, config_path)
    for p in write_disclosure(con, (first, last or first), job, model, fmt, out):
        click.echo(f"wrote {p}")


@report.command("provider-carbon")
@click.option("--month", required=True, help="Month, YYYY-MM.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default build/reports/<month>).")
@warehouse_option
@config_option
@user_errors
def report_provider_carbon(month: str, out: Path | None, warehouse: Path, config_path: Path | None) -> None:
    """The clouds' carbon exports (AWS CARBON_EMISSIONS, Google Carbon Footprint) line by line
    beside meterbook's figures, with the difference and the class of explanation (CSV).

    Example: meterbook report provider-carbon --month 2026-10 --out build/reports/2026-10
    """
    from reports.disclosure import write_provider_carbon
    con, _config = build_marts(warehouse, config_path)
    click.echo(f"wrote {write_provider_carbon(con, month, out or Path('build/reports') / month)}")


@report.command("methodology")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("build/reports"), show_default=True,
              help="Output folder; the file is named by the reference data's hash.")
@user_errors
def report_methodology(out: Path) -> None:
    """Methodology PDF/A: every coefficient, assumption and peer cross-check of the reference data.
    One per reference-data version; chargebacks and audits name it by hash.

    Example: meterbook report methodology --out build/reports
    """
    from reports.methodology_doc import write_methodology
    click.echo(f"wrote {write_methodology(out)}")


@main.command()
@click.option("--month", required=True, help="Month to replay, YYYY-MM.")
@click.option("--region", "regions", multiple=True, help="Zone to replay the month in, e.g. aws:eu-north-1 (repeatable; "
              "default [whatif] regions, else every region instance_prices.csv prices).")
@click.option("--deferrable", multiple=True, help="Namespace or pod that may wait for cleaner hours (repeatable; adds to [whatif]).")
@click.option("--window-h", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Hours after its last hour a deferrable job may still run (default [whatif] shift_window_h).")
@click.option("--util-target", type=click.FloatRange(0, 1, min_open=True), default=None, help="Target GPU utilization, 0-1.")
@click.option("--spot-share", type=click.FloatRange(0, 1), default=None, help="Share of on-demand GPU spend moved to Spot, 0-1.")
@click.option("--detail", is_flag=True, help="Also print every subject (resource, job, workload, project).")
@click.option("--json", "as_json", is_flag=True, help="Print the replay as JSON.")
@warehouse_option
@config_option
@user_errors
def whatif(month: str, regions: tuple[str, ...], deferrable: tuple[str, ...], window_h: float | None, util_target: float | None,
           spot_share: float | None, detail: bool, as_json: bool, warehouse: Path, config_path: Path | None) -> None:
    """Replay a month's measured GPU-hours under levers: another region, deferrable jobs in the
    cleanest hours, a utilization target, a Spot share, each job family's cost-optimal GPU count.
    Prints cost, kWh and CO2e deltas with bounds ([whatif] in meterbook.toml sets the defaults).

    Example: meterbook whatif --month 2026-10 --region aws:eu-north-1 --deferrable llm-finetune --util-target 0.8
    """
    from core.months import check_month
    from reports.whatif import format_text, whatif_context
    check_month(month)
    numbers = {k: v for k, v in (("shift_window_h", window_h), ("util_target", util_target), ("spot_share", spot_share)) if v is not None}

    def overrides(base) -> dict:
        return {"whatif": {**base.whatif, **numbers}, "whatif_regions": regions or base.whatif_regions,
                "deferrable_namespaces": base.deferrable_namespaces + deferrable, "deferrable_jobs": base.deferrable_jobs + deferrable}
    con, config = build_marts(warehouse, config_path, overrides)
    if not one_row(con, "select count(*) from team_month where month = ?", [month])[0]:
        months = [r[0] for r in con.execute("select distinct month from team_month order by 1").fetchall()]
        raise InputError(f"--month {month}", "nothing measured or billed in this month",
                         f"months in the warehouse: {', '.join(months) or 'none'}", "Pick one of those months")
    ctx = whatif_context(con, month)
    click.echo(json.dumps(ctx, indent=2, default=str) if as_json else format_text(ctx, detail))
    _said_defaults(config)


@main.group()
def export() -> None:
    """Export warehouse data in open formats."""


@export.command("focus")
@click.option("--month", required=True, help="Month, YYYY-MM.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output path without suffix (default build/exports/focus-<month>); .parquet and .csv are written.")
@click.option("--version", "focus_version", type=click.Choice(["1.2", "1.3", "1.4"]), default="1.4", show_default=True,
              help="FOCUS version to write; 1.3 and later carry the allocation as split cost allocation rows.")
@warehouse_option
@config_option
@user_errors
def export_focus_cmd(month: str, out: Path | None, focus_version: str, warehouse: Path, config_path: Path | None) -> None:
    """FOCUS export of a month's charges, with GPU, energy and CO2e as x_ columns.

    Example: meterbook export focus --month 2026-10 --version 1.3 --out build/exports/focus-2026-10
    """
    from pipelines.export import export_focus
    con, config = build_marts(warehouse, config_path)
    for p in export_focus(con, month, out or Path(f"build/exports/focus-{month}"), focus_version):
        click.echo(f"wrote {p}")
    _said_defaults(config)


@export.command("allocation")
@click.option("--month", required=True, help="Month, YYYY-MM.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("build/exports"), show_default=True,
              help="Output folder; allocation-<month>.parquet and .csv are written.")
@warehouse_option
@config_option
@user_errors
def export_allocation_cmd(month: str, out: Path, warehouse: Path, config_path: Path | None) -> None:
    """Line-level allocation of a month for BI tools: team, day, resource, namespace, workload,
    rule, meter, amount, unit, source file sha256 and row. Lines add up to the chargeback's team
    totals for every meter; Parquet holds exact amounts, CSV the currency's minor unit.

    Example: meterbook export allocation --month 2026-10 --out build/exports
    """
    from pipelines.export import export_allocation
    con, config = build_marts(warehouse, config_path)
    for p in export_allocation(con, month, out):
        click.echo(f"wrote {p}")
    _said_defaults(config)


@main.group("config")
def config_group() -> None:
    """Check a meterbook.toml: what it maps, and what it misses in a warehouse."""


@config_group.command("check")
@config_option
@click.option("--warehouse", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"Also show what in this warehouse no mapping reaches (default: {DEFAULT_WAREHOUSE} if it exists).")
@user_errors
def config_check(config_path: Path | None, warehouse: Path | None) -> None:
    """Validate meterbook.toml and print its effective mappings: tag keys, namespace -> team,
    host -> resource, rules and allocation. With a warehouse, list the tag keys, namespaces and
    hosts no mapping reaches, and the config entries that match nothing there.

    Example: meterbook config check --config meterbook.toml --warehouse build/meterbook.duckdb
    """
    from pipelines.config_check import against_warehouse, effective
    if warehouse is None and DEFAULT_WAREHOUSE.is_file():
        warehouse = DEFAULT_WAREHOUSE
    con = _open(warehouse, read_only=True) if warehouse is not None else None
    config = _config(config_path)
    # tag keys, namespaces and hosts are the data's text: escaped, they cannot drive the terminal
    for line in effective(config):
        click.echo(printable(line))
    if con is not None:
        click.echo(printable(f"Warehouse: {warehouse}"))
        for line in against_warehouse(con, config):
            click.echo(printable(line))


@export.command("jobs")
@click.option("--month", required=True, help="Month, YYYY-MM.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output path without suffix (default build/exports/jobs-<month>); .csv and .parquet are written.")
@warehouse_option
@config_option
@user_errors
def export_jobs_cmd(month: str, out: Path | None, warehouse: Path, config_path: Path | None) -> None:
    """The month's jobs (work log): GPU-hours, MFU, cost, kWh and CO2e per unit of work, per team.

    Example: meterbook export jobs --month 2026-10 --out build/exports/jobs-2026-10
    """
    from pipelines.export_jobs import export_jobs
    con, config = build_marts(warehouse, config_path)
    for p in export_jobs(con, month, out or Path(f"build/exports/jobs-{month}")):
        click.echo(f"wrote {p}")
    _said_defaults(config)


if __name__ == "__main__":
    main()
