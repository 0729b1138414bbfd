"""dcgm-exporter Prometheus text exposition: one scrape per file, or many concatenated with
per-sample timestamps (as a federation or `promtool tsdb dump-openmetrics` writes them)."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import duckdb

from core.sql import fill, literal, one_row, sql_text
from sources.base import Head, Staged, register
from sources.linecount import LineCount
from sources.telemetry import SERIES_KEYS, TelemetryReader

# A comment line: its first character other than a blank is '#'. (DuckDB skips empty lines
# itself; a line starting with '}' has a NULL `a` and is a sample to reject, not to drop.)
COMMENT_LINE = "a is not null and (starts_with(a, '#') or (starts_with(a, ' ') and starts_with(ltrim(a), '#')))"
# The same test on a group of _tel_groups: a line's series (stg_dcgm_prom__samples.sql), and
# so the metric that starts it, begins after blanks with the line's first character other than
# a blank: a comment's with its '#'.
COMMENT_GROUP = "coalesce(starts_with(ltrim(metric), '#'), false)"

BATCH_PROBE = 32 * 1024
SAMPLE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?\s+\S+(\s+-?[\d.eE+]+)?\s*$")
ISO_IN_NAME = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})[T_ -]?(\d{2})[:-]?(\d{2})[:-]?(\d{2})")
EPOCH_IN_NAME = re.compile(r"(?<!\d)(1[0-9]{9})(?:\d{3})?(?!\d)")


def scrape_time(head: Head, option: str | None) -> tuple[datetime, str]:
    """When a scrape without sample timestamps was taken, and how we know (recorded per file)."""
    if option:
        return datetime.fromisoformat(option.replace("Z", "+00:00")).astimezone(timezone.utc).replace(tzinfo=None), "option"
    name = head.path.name
    if m := ISO_IN_NAME.search(name):
        year, month, day, hour, minute, second = map(int, m.groups())
        return datetime(year, month, day, hour, minute, second), "file_name"
    if m := EPOCH_IN_NAME.search(name):
        return datetime.fromtimestamp(int(m.group(1)), timezone.utc).replace(tzinfo=None), "file_name_epoch"
    mtime = head.path.stat().st_mtime
    return datetime.fromtimestamp(mtime, timezone.utc).replace(tzinfo=None), "file_mtime"


def lines_view(con: duckdb.DuckDBPyConnection, heads: list[Head]) -> None:
    """raw_prom_cols over the files of `heads`; with more than one, each line has its file's `filename`."""
    # Split at '}' by the CSV parser (see stg_dcgm_prom__samples.sql); short lines pad with nulls.
    paths = ", ".join(literal(str(h.path)) for h in heads)
    con.execute(f"""
        create or replace temp view raw_prom_cols as
        select * from read_csv({paths if len(heads) == 1 else f"[{paths}]"}, columns = {{'a': 'VARCHAR', 'b': 'VARCHAR', 'c': 'VARCHAR', 'd': 'VARCHAR'}},
                               header = false, delim = '}}', quote = '', escape = '', comment = '', auto_detect = false,
                               null_padding = true, strict_mode = true, compression = 'auto', filename = {str(len(heads) > 1).lower()})""")


@register
class DcgmPromReader(TelemetryReader):
    kind = "dcgm-prom"
    description = "dcgm-exporter Prometheus text scrape(s), OpenMetrics dumps"
    comments_per_group = True    # tests turn it off to hold the per-group drop to the per-line one

    def dialect(self, head: Head) -> str | None:
        return "prom"

    def expected_rows(self, con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None, staged: Staged) -> int | None:
        """One sample per line that is neither blank nor a # comment (HELP, TYPE, EOF, notes)."""
        return None if count is None else count.content - count.comments

    def sniff(self, head: Head) -> str | None:
        lines = [ln for ln in head.text.splitlines()[:200] if ln.strip()]
        # dcgm-exporter's series, or kube-state-metrics' pod requests and limits (what pods reserved)
        dcgm = any(("DCGM_FI_" in ln or ln.startswith(("dcgm_", "kube_pod_container_resource_", "kube_pod_annotations", "kube_pod_labels"))) for ln in lines)
        samples = [ln for ln in lines if not ln.startswith("#")]
        if dcgm and samples and all(SAMPLE.match(ln) for ln in samples[:50]):
            return "openmetrics" if any(ln.strip() == "# EOF" for ln in lines) else "text-0.0.4"
        return None

    def comments_per_line(self, head: Head) -> bool:
        """Comments in the head (HELP and TYPE before every scrape, say) are dropped line by line;
        a file without them (a dump of samples) leaves the odd one to the groups, sparing the test
        on every line (a tenth of the pass's DuckDB time). Either way, the same samples."""
        return not self.comments_per_group or any(ln.lstrip(" ").startswith("#") for ln in head.text.splitlines())

    def batch_key(self, head: Head) -> tuple | None:
        """A file whose samples carry their own times (a dump, a federation); one without takes
        its scrape's time from its name or mtime, which only its own staging knows."""
        # the head's first 32 KiB, its last line perhaps cut short: a guess, since a later sample
        # without its time is a reject in the batch, which sends its files back to their own staging
        probe = head.text[:BATCH_PROBE]
        lines = probe.splitlines() if probe == head.text and probe.endswith("\n") else probe.splitlines()[:-1]
        samples = [m for ln in lines if ln.strip() and not ln.lstrip(" ").startswith("#") for m in [SAMPLE.match(ln)]]
        return () if samples and all(m is not None and m.group(2) is not None for m in samples) else None

    def batch_samples(self, con: duckdb.DuckDBPyConnection, heads: list[Head]) -> tuple[dict[str, str], str | None]:
        """Every file of the batch in one read. A sample without a written time takes no scrape
        time here (NULL, a rejected sample): where it comes from (the file's name, its mtime)
        is each file's own staging's, and its note too."""
        lines_view(con, heads)
        per_line = any(self.comments_per_line(h) for h in heads)
        name = "stg_dcgm_prom__samples.sql"
        con.execute("create or replace temp view _tel_samples as " + fill(name, sql_text("10_staging", name), {
            "row_number": "null::bigint", "comment_line": COMMENT_LINE if per_line else "false", "scrape_ms": "null::bigint",
            "carried": ", filename"}))
        return {**SERIES_KEYS, "carried": ", filename"}, None if per_line else COMMENT_GROUP

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        ts, basis = scrape_time(head, options.get("scrape_time"))
        scrape_ms = int((ts - datetime(1970, 1, 1)).total_seconds() * 1000)
        self.prepare(con)
        lines_view(con, [head])
        per_line = self.comments_per_line(head)
        # scrape_ms: an integer we computed, inlined (a one-row table here became a per-sample cross product)
        self.sample_views(con, "stg_dcgm_prom__samples.sql", sql_text("10_staging", "stg_dcgm_prom__samples.sql"),
                          fast={"comment_line": COMMENT_LINE if per_line else "false"},
                          scrape_ms=str(int(scrape_ms)), comment_line=COMMENT_LINE, carried="")
        rows_read, _ = self.group(con, head, no_samples=None if per_line else COMMENT_GROUP)
        untimed = one_row(con, "select coalesce(sum(n_good), 0) from _tel where t0_ms = ?", [scrape_ms])[0]
        notes = [f"scrape time from {basis}: {ts.isoformat()}Z"] if untimed else []
        if untimed and basis == "file_mtime":
            # a copy of the file has another mtime, and so another hour: said with the file's
            # data quality, not only in this run's output
            # located at the first sample it dates (a scrape: a small file, numbered at little cost)
            con.execute("insert into _row_findings select min(row_number), null, 'scrape_time_from_file_mtime', ?, ? "
                        "from _tel_samples_numbered where ts_ms = ?",
                        [f"{ts.isoformat()}Z", f"{untimed} samples carry no time and the file's name none: dated by the file's "
                         "modification time, which a copy changes. Pass --scrape-time or name the file with its time", scrape_ms])
        return Staged(rows_read=rows_read, format_version=self.sniff(head) or "text", notes=notes)
