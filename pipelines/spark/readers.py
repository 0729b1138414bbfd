"""Readers at scale: the bulk formats read by Spark, in parallel across files and, for plain
text and Parquet, within a file (a .gz stream is one task: gzip cannot be split).

Each reader exposes the same raw columns as its DuckDB reader (sources/), then runs the same
staging models transpiled (pipelines.spark.dialect): charges with their rejects and findings
for FOCUS, legacy CUR and CUR 2.0; GPU-hour and workload parts for dcgm-exporter text, long CSV
and Prometheus query_range JSON. Row numbers are the 1-based data row in the file, as on one
machine: zipWithIndex numbers rows in file order across a file's splits.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache, reduce
from typing import Any

import duckdb

from core.errors import InputError
from core.sql import fill, literal, read_sql, sql_text
from pipelines.spark.steps import to_spark
from pipelines.spark.storage import (
    checkpoint,
    duck_shapes,
    empty_table,
    known_empty,
    local_frame,
    local_view,
    spark_schema,
    spark_type,
)
from pipelines.warehouse import add_macros
from schemas.charges import Charges
from schemas.contract import reject_sql
from sources import REGISTRY, aws_cur, focus, prom_export
from sources.base import Head
from sources.billing import currency_totals, findings_sql, lines_sql, tag_folds
from sources.dcgm_prom import COMMENT_LINE, scrape_time
from sources.tabular import canonical_select, csv_names, is_json_lines
from sources.telemetry import (
    CHECKED,
    GPU_PART_MODELS,
    LIMITED_KEYS,
    PART_MODELS,
    PLAIN_NUMBERED,
    REJECTED_LINES,
    SERIES_KEYS,
    TelemetryReader,
    limits_sql,
    plausible_sql,
    reject_lines_sql,
)

REJECT_COLUMNS = "row_number bigint, column_name string, check_name string, value string, message string"


@dataclass
class SparkStaged:
    """A file staged on Spark: the rows to load per fact table, rejects, findings, counts."""

    rows_read: int
    rows_loaded: int
    format_version: str
    facts: dict[str, Any]                    # table -> DataFrame without file_id
    rejects: Any                             # DataFrame(REJECT_COLUMNS)
    findings: Any | None = None
    delivery_key: str | None = None
    notes: list[str] = field(default_factory=list)
    totals: dict[str, Any] = field(default_factory=dict)
    row_findings: Any | None = None          # DataFrame(REJECT_COLUMNS): notes on loaded rows
    rows_rejected: int = 0                   # distinct rows in `rejects`


def numbered(df, spark, name: str = "row_number"):
    """The rows with their 1-based position in the file, computed in the JVM (in_file_order)."""
    from pyspark.sql import functions as F
    return in_file_order(df.withColumn(name, F.monotonically_increasing_id()), name)


def in_file_order(df, column: str, counts: dict[int, int] | None = None):
    """`column`, monotonically_increasing_id taken at the scan (the partition in its upper bits,
    the position in it in its lower 33), as the row's 1-based position in the file: a scan's
    partitions are the file's splits in order, so (rows of earlier partitions) + (position in
    this one) + 1. The partitions' rows are counted over `df` itself (or given, as `counts`, by
    a pass that had other things to find): taken over a staged file kept once (one row per row
    read), no pass over the file only to count it."""
    from pyspark.sql import functions as F
    pid = F.shiftright(column, 33)
    if counts is None:
        counts = dict(df.groupBy(pid).count().collect())
    offsets, total = {}, 0
    for part in sorted(counts):
        offsets[part], total = total, total + counts[part]
    offset = F.element_at(F.create_map(*[F.lit(x) for kv in offsets.items() for x in kv]), pid) if offsets else F.lit(0)
    return df.withColumn(column, (offset + F.col(column) - F.shiftleft(pid, 33) + 1).cast("long"))


def kept(df):
    """The rows computed once and the plan cut there (storage.checkpoint): later queries over a
    staged view start from these rows, not from the staging model (whose macro-expanded
    expressions Spark would otherwise analyse again under every query that reads it: tens of
    seconds per file, even a small one)."""
    return checkpoint(df)


def sql(spark, duck_sql: str, variables: dict | None = None):
    return spark.sql(to_spark(duck_sql, variables, lambda text: spark.sql(text).columns))


def _fail(head: Head, exc: Exception) -> Exception:
    """A failure while reading a file: the user's file (a malformed row, bad bytes) becomes an
    InputError; an analysis error is our SQL's and stays what it is (a traceback to be seen)."""
    from pyspark.errors import AnalysisException
    if isinstance(exc, AnalysisException):
        return exc
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
    return InputError(head.path, "cannot parse the file", first[:200], "Fix or re-export the file")


# --- billing: FOCUS, legacy CUR, CUR 2.0 -------------------------------------------------------

def csv_frame(spark, head: Head):
    """A CSV as text columns c0..cN by position, as sources.tabular.csv_read names them (the
    header's names may repeat or differ only in case); a trailing empty header name names no
    column. Empty cells read as null, which every cell() of the select list gives them anyway."""
    reading = spark.read.options(header=True, inferSchema=False, mode="FAILFAST", escape="\"",
                                 nullValue="", emptyValue="", multiLine=False)
    if head.header_lines == 1 and head.columns:
        # the header's fields as the head parsed them (Spark's parser cuts that line alike): no
        # job that reads the header to learn them; a row of another width fails as it did
        df = reading.schema(", ".join(f"c{i} string" for i in range(len(head.columns)))).csv(str(head.path))
    else:   # a header across lines (a quoted line break), as Spark's line-by-line parser cuts it
        df = reading.option("enforceSchema", False).csv(str(head.path))
    width = len(csv_names(head))
    return df.toDF(*[f"c{i}" for i in range(len(df.columns))]).select(*[f"c{i}" for i in range(width)])


def raw_billing(spark, head: Head):
    """Every column as text (CSV, by position) or as typed (Parquet), numbered, as view `_raw`."""
    from pyspark.sql import functions as F
    if head.parquet:
        df = spark.read.parquet(str(head.path))
    elif is_json_lines(head):
        raise InputError(head.path, "JSON lines billing on Spark", "not a bulk format here",
                         "Ingest it with --engine duckdb, or export CSV or Parquet")
    else:
        df = csv_frame(spark, head)
    # numbered as the scan reads them; in_file_order makes them 1.. once the rows are staged
    df.withColumn("row_number", F.monotonically_increasing_id()).createOrReplaceTempView("_raw")


def stage_billing(spark, head: Head, reader, options: dict[str, Any]) -> SparkStaged:
    """The DuckDB reader's steps, on Spark: canonical columns, staging model, catalog join,
    contract checks as SQL, row notes, findings."""
    from pyspark.sql import functions as F
    con = duckdb.connect()   # only to read a Parquet footer for its column types
    keep = None
    prefixes: tuple[str, ...]
    nullstr: tuple[str, ...]
    if reader.kind == "focus":
        aliases, required, prefixes, model, nullstr = focus.ALIASES, focus.REQUIRED, (), "stg_focus__charges.sql", ("", "NULL")
        keep = focus.kept_as_written
    else:
        aliases, required, model, nullstr = aws_cur.ALIASES, aws_cur.REQUIRED, "stg_aws_cur__charges.sql", ("",)
        prefixes = aws_cur.TAG_PREFIXES if reader.kind == "aws-cur" else ()
    select, extras = canonical_select(con, head, aliases, required, nullstr, prefixes, keep_as_written=keep)
    raw_billing(spark, head)
    try:
        canonical = "raw_focus" if reader.kind == "focus" else "raw_cur"
        sql(spark, f"select {', '.join(select)} from _raw").createOrReplaceTempView(canonical)
        slots = {}
        if reader.kind != "focus":
            slots["tags"] = aws_cur.tags_map_sql(extras, aws_cur.tag_key) if reader.kind == "aws-cur" else aws_cur.CUR2_TAGS
        sql(spark, read_sql("10_staging", model, **slots)).createOrReplaceTempView("_staged")
        # the catalog joined and the line checks computed in the pass that stages the rows, and
        # kept once: the rejects, row notes, loaded lines and findings all read these rows (the
        # line checks and the catalog do not read the currency filled below)
        lines = kept(sql(spark, lines_sql(names=reader.line_names(head))))
        file = file_facts(lines)
        staged = in_file_order(lines, "row_number", file.counts)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - a malformed row (FAILFAST) or bad bytes: the user's file
        raise _fail(head, exc) from None
    rows_read, named = file.rows_read, file.named
    # a file whose rows hold no notes or errors (the norm) takes none without a pass to find none
    notes = staged.selectExpr("row_number", "explode(_notes) as e").selectExpr(
        "row_number", "e.column_name", "e.check_name", "e.value", "e.message") if file.noted else empty_table(spark, REJECT_COLUMNS)
    # as sources.billing.file_currency: blank currencies take the file's one named currency
    if len(named) == 1 and file.blanks:
        notes = notes.unionByName(staged.where("billing_currency is null").selectExpr(
            "row_number", "'billing_currency' as column_name", "'currency_from_file' as check_name",
            f"{literal(named[0])} as value", "'currency cell is empty; the currency of the file''s other rows is used' as message"))
        staged = staged.withColumn("billing_currency", F.coalesce("billing_currency", F.lit(named[0])))
    staged.createOrReplaceTempView("_staged")
    origins = set_origins_aside(spark) if reader.kind == "focus" else None
    spark.table("_staged").createOrReplaceTempView("_lines")
    cols = set(spark.table("_lines").columns)
    checks = reject_sql(Charges, cols, "_lines").removeprefix("insert into _rejects ")
    # the staging model's cast errors and the checks of the resolved lines (sources.billing.line_checks_sql),
    # both on each kept row
    rejects = spark.sql("select row_number, e.column_name, e.check_name, e.value, e.message "
                        "from (select row_number, explode(concat(_errors, _line_errors)) as e from _lines)").distinct() \
        if file.erred else empty_table(spark, REJECT_COLUMNS)
    if checks:
        rejects = rejects.unionByName(sql(spark, f"select * from ({checks}) as c(row_number, column_name, check_name, value, message)"))
    # the rows rejected counted first: a file with none (the norm) then has no rejects to keep,
    # and every anti join to them below (the loaded lines, row notes, findings) folds away
    # without the job that broadcast them
    rejected = 0 if known_empty(rejects) else rejects.select("row_number").distinct().count()
    rejects = kept(rejects) if rejected else empty_table(spark, REJECT_COLUMNS)
    rejects.createOrReplaceTempView("_rejects")
    if file.noted:
        notes = notes.unionByName(spark.sql("select row_number, e.column_name, e.check_name, e.value, e.message "
                                            "from (select row_number, explode(_line_notes) as e from _lines)"))
    notes = notes.distinct()
    notes.createOrReplaceTempView("_row_findings")
    # notes on loaded rows only, as on one machine: a rejected row's reject says what is wrong
    row_findings = spark.sql("select f.* from _row_findings f left anti join (select distinct row_number from _rejects) r "
                             "using (row_number)")
    # not kept: each use reads the kept _lines past the (few) rejects
    lines = spark.sql("select s.* from _lines s left anti join (select distinct row_number from _rejects) r using (row_number)")
    # an inline table: none (the norm) folds the folded-tag check's join away
    local_view(spark, "_tag_folds", [("raw", "string"), ("team", "string")], tag_folds(file.raws))
    # a file whose line item keys cannot repeat is checked without them: the duplicate-key check finds none
    keyed = "line_item_key" in cols and repeated_key_hash(lines)
    findings = sql(spark, findings_sql(cols if keyed else cols - {"line_item_key"}))
    if reader.kind != "focus" and file.split_rows:   # as AwsCurReader.finish: split cost allocation rows against their parent
        findings = findings.unionByName(sql(spark, aws_cur.split_checks_sql()))
    # a few rows (one per kind of finding), computed once and written from the driver's copy
    findings, found = collected(spark, findings)
    sums, carrying = loaded_sums(lines, keep is not None)
    rows_loaded = sum(n for *_, n in sums)
    version = reader.sniff(head) or ("1.0" if reader.kind == "focus" else "legacy-csv")
    facts = {"charges": lines}
    file_notes: list[str] = []
    aside = 0
    if keep is not None:   # as FocusReader.load: the loaded rows' columns as written
        facts["charge_source_columns"] = lines.selectExpr("row_number", "_source_columns as columns")
        facts.update(provider_parts(spark, lines) if carrying else {})
    if origins is not None:   # in the warehouse, beside the charges: loaded, counted once
        facts["focus_origin_charges"] = origins.selectExpr(
            "row_number", "resource_id", "charge_period_start", "billing_currency", "billed_cost", "effective_cost",
            "_origin_of as allocated_rows", "_allocated_billed_cost as allocated_billed_cost")
        aside, differ = origins.selectExpr("count(*)", "count_if(billed_cost <> _allocated_billed_cost)").first()
        rows_loaded += aside
        file_notes.append(focus.origins_note(aside, differ))
    totals = currency_totals([r[:5] for r in sums], found)
    if keep is not None:   # as FocusReader.totals
        allocated = facts["focus_allocations"].count() if "focus_allocations" in facts else 0
        if allocated or aside:
            totals |= {"provider_allocated_rows": allocated, "origin_charges_aside": aside}
    return SparkStaged(rows_read, rows_loaded, version, facts, rejects, findings, ",".join(file.keys) or None,
                       notes=file_notes, totals=totals, row_findings=row_findings, rows_rejected=rejected)


# the staged columns sources.focus.provider_parts_sql reads
PROVIDER_COLUMNS = ("row_number", "_allocated_method_id", "_allocated_resource_id", "_allocated_resource_name",
                    "_allocated_tags", "_allocated_method_details", "_contract_applied")


def provider_parts(spark, lines) -> dict[str, Any]:
    """As FocusReader.load: focus_allocations and charge_contracts by the DuckDB reader's own
    SQL (sources.focus.provider_parts_sql), on the driver, over the loaded rows that carry an
    allocation or a contract only (none in most exports; a provider that splits every row
    sends them all through the driver, as Arrow). Called only where loaded_sums counted some
    (toArrow of no rows fails in pyspark: an Arrow table of no chunks)."""
    carrying = lines.where("_allocated_method_id is not null or _contract_applied is not null").select(*PROVIDER_COLUMNS)
    con = duckdb.connect()
    con.register("_carrying", carrying.toArrow())
    parts = {}
    for table, query in focus.provider_parts_sql("_carrying").items():
        rows = con.sql(query).to_arrow_table()
        names = [c for c, _ in duck_shapes()[table] if c != "file_id"]
        parts[table] = spark.createDataFrame(rows.rename_columns(names), spark_schema(table, without="file_id"))
    return parts


def set_origins_aside(spark):
    """As sources.focus.set_origins_aside: the origin charges whose allocated rows the file also
    has, out of _staged (their cost is in the allocated rows); None when the file has none.
    Rows with a cast error are rejected there, as on one machine, so they are no origin."""
    spark.sql("select row_number from _staged where size(_errors) > 0").createOrReplaceTempView("_cast_rejects")
    origins = kept(sql(spark, focus.origins_sql("_staged", "_cast_rejects")))
    if origins.isEmpty():
        return None
    spark.table("_staged").join(origins.select("row_number"), "row_number", "left_anti").createOrReplaceTempView("_staged")
    return origins


def loaded_sums(lines, focus_parts: bool) -> tuple[list[tuple[Any, ...]], int]:
    """As BillingReader.totals, in one pass over the loaded lines: per currency the sums of
    billed, effective and list cost and GPU-hours, and the lines (a line is one row read: the
    catalog has one entry per instance type); with `focus_parts`, how many lines carry a
    provider allocation or an applied commitment (provider_parts). Ordered on the driver, as
    Spark orders (nulls first): an orderBy samples the groups in jobs of its own."""
    from pyspark.sql import functions as F
    carrying = F.count_if(F.col("_allocated_method_id").isNotNull() | F.col("_contract_applied").isNotNull()) \
        if focus_parts else F.lit(0)
    rows = lines.groupBy("billing_currency").agg(F.sum("billed_cost"), F.sum("effective_cost"), F.sum("list_cost"),
                                                 F.sum("gpu_hours"), F.count(F.lit(1)), carrying).collect()
    rows.sort(key=lambda r: (r[0] is not None, r[0]))
    return [tuple(r[:6]) for r in rows], sum(int(r[6]) for r in rows)


def collected(spark, findings) -> tuple[Any, dict[str, int]]:
    """A file's findings (a row per kind) computed once, as an inline table (storage.local_frame)
    that the write reads with no job of its own to compute them again or read a checkpoint
    back; and their rows by name, for the totals."""
    rows = findings.collect()
    frame = local_frame(spark, [(f.name, f.dataType.simpleString()) for f in findings.schema.fields], rows)
    return frame, {r["finding"]: r["rows"] for r in rows}


# tag values outside ASCII, the only ones NFKC can change (as sources.billing.TAG_VALUES_SQL)
NOT_ASCII = "[^\\x00-\\x7f]"


@dataclass
class FileFacts:
    """What one pass over a file's staged rows finds (file_facts)."""

    rows_read: int
    named: list[str]                 # currencies named (two are enough to know there is no single one)
    blanks: int                      # rows without a currency
    keys: list[str]                  # delivery keys (account@billing month)
    raws: list[str]                  # distinct tag values outside ASCII (sources.billing.tag_folds)
    counts: dict[int, int]           # rows of each partition of the scan (in_file_order)
    erred: int                       # rows with a cast error or a failed line check (_errors, _line_errors)
    noted: int                       # rows with a field note (_notes, _line_notes)
    split_rows: int                  # split cost allocation rows (CUR's split_parent_id)


def file_facts(lines) -> FileFacts:
    """What the file holds, in one pass over its staged rows (FileFacts). The counts of rows with
    errors, notes and split rows let the passes that only look for those be left out where a
    file has none (the norm): explode() and a group-by over such rows give no rows either way."""
    from pyspark.sql import functions as F
    odd = F.filter(F.map_values("tags"), lambda v: v.rlike(NOT_ASCII))
    key = F.concat(F.coalesce("billing_account_id", F.lit("?")), F.lit("@"),
                   F.coalesce(F.date_format("billing_period_start", "yyyy-MM"), F.lit("?")))

    def any_of(*columns: str):
        # size() of a null array is -1 (or null): no element either way
        present = [F.size(c) > 0 for c in columns if c in lines.columns]
        return F.count_if(reduce(operator.or_, present)) if present else F.lit(0)

    split = F.count_if(F.col("split_parent_id").isNotNull()) if "split_parent_id" in lines.columns else F.lit(0)
    parts = lines.groupBy(F.shiftright("row_number", 33)).agg(
        F.count(F.lit(1)), F.collect_set("billing_currency"), F.count_if(F.col("billing_currency").isNull()),
        F.collect_set(key), F.collect_set(F.when(F.size(odd) > 0, odd)),
        any_of("_errors", "_line_errors"), any_of("_notes", "_line_notes"), split).collect()
    return FileFacts(rows_read=sum(p[1] for p in parts), named=sorted({c for p in parts for c in p[2]})[:2],
                     blanks=sum(p[3] for p in parts), keys=sorted({k for p in parts for k in p[4]}),
                     raws=sorted({v for p in parts for values in p[5] for v in values}),
                     counts={p[0]: p[1] for p in parts}, erred=sum(p[6] for p in parts),
                     noted=sum(p[7] for p in parts), split_rows=sum(p[8] for p in parts))


def repeated_key_hash(lines) -> bool:
    """Whether two staged lines share the 64-bit hash of their line item key: one group-by of
    integers. Where none do (the norm), no key repeats, so the findings leave out their
    duplicate-key check (its exact group-by of the keys themselves, and the scans and shuffles
    of every line that feed it); Spark's own hash() has 32 bits, which collide at this size."""
    from pyspark.sql import functions as F
    hashes = lines.where(F.col("line_item_key").isNotNull()).groupBy(F.xxhash64("line_item_key")).count()
    return not hashes.where("count > 1").isEmpty()


# --- telemetry: dcgm-exporter text, long CSV, query_range JSON ---------------------------------

# Each samples function returns the DuckDB reader's samples SQL with its slots but
# `{{ row_number }}` filled (the caller fills that: null for the fast pass, a number to locate
# rejects), the series keys, and notes.
Samples = tuple[str, str, dict[str, str], dict[str, str], list[str]]


def prom_text_samples(spark, head: Head, options: dict[str, Any]) -> Samples:
    """raw_prom_cols(a, b, c, d): each line cut at '}' as DuckDB's CSV reader cuts it."""
    ts, basis = scrape_time(head, options.get("scrape_time"))
    scrape_ms = int((ts - datetime(1970, 1, 1)).total_seconds() * 1000)
    # the lines go unnumbered (a pass over the file fewer): only a file with rejects or a line
    # it cannot cut needs their numbers, and then numbers them (prom_cols with `numbered`)
    from pyspark.sql import functions as F
    prom_cols(spark, spark.read.text(str(head.path)).withColumn("row_number", F.lit(None).cast("long")))
    if spark.sql("select count_if(n_parts > 4) from raw_prom_cols_all").first()[0]:
        prom_cols(spark, numbered(spark.read.text(str(head.path)), spark))
        too_many = spark.sql("select min(line_no) from raw_prom_cols_all where n_parts > 4").first()[0]
        raise InputError(head.path, "cannot parse the file", f"line {too_many}: more than three '}}' in one sample",
                         "Fix or re-export the file")
    name = "stg_dcgm_prom__samples.sql"
    return (name, sql_text("10_staging", name), {"scrape_ms": str(scrape_ms), "comment_line": COMMENT_LINE, "carried": ""}, SERIES_KEYS,
            [f"scrape time from {basis}: {ts.isoformat()}Z", str(scrape_ms)])


def prom_cols(spark, lines) -> None:
    """Views raw_prom_cols_all and raw_prom_cols over `lines` (value, row_number: the line's
    number, or null where none is needed)."""
    lines.createOrReplaceTempView("_raw_lines")
    spark.sql("""select row_number as line_no, element_at(p, 1) as a, element_at(p, 2) as b, element_at(p, 3) as c,
                        element_at(p, 4) as d, size(p) as n_parts
                 from (select row_number, split(value, '}') as p from _raw_lines)""").createOrReplaceTempView("raw_prom_cols_all")
    spark.sql("select line_no, a, b, c, d from raw_prom_cols_all").createOrReplaceTempView("raw_prom_cols")


def prom_range_samples(spark, head: Head) -> Samples:
    """raw_prom_range(r): one row per series; each [time, "value"] pair kept as its JSON text."""
    schema = "data struct<resultType: string, result: array<struct<metric: map<string,string>, `values`: array<string>>>>"
    spark.read.schema(schema).option("multiLine", True).json(str(head.path)) \
        .selectExpr("explode(data.result) as r").createOrReplaceTempView("raw_prom_range")
    name = "stg_prom_range__samples.sql"
    return name, sql_text("10_staging", name), {}, SERIES_KEYS, []


def prom_csv_samples(spark, head: Head) -> Samples:
    """The long CSV's samples, by the DuckDB reader's own SQL over a Spark read of the file."""
    reader = prom_export.PromCsvReader()
    numbered(csv_frame(spark, head), spark, "_rn").createOrReplaceTempView("_raw_csv")
    text, keys = reader.samples_sql(head, "_raw_csv")
    return "long-csv samples", text, {}, keys, []


def telemetry_views(spark) -> None:
    """As TelemetryReader.prepare: dcgm_fields, telemetry_limits and gpu_ratings, as inline
    tables (storage.local_view) of the rows that method gives on the driver: no job reads or
    types a reference CSV for each file, and a join to them is planned over rows Spark knows."""
    for table, (columns, rows) in telemetry_reference().items():
        local_view(spark, table, columns, rows)


@lru_cache(maxsize=1)
def telemetry_reference() -> dict[str, tuple[list[tuple[str, str]], list[tuple[Any, ...]]]]:
    """The telemetry reader's reference tables by its own prepare, in a DuckDB on the driver:
    per table its columns (Spark types) and rows."""
    con = duckdb.connect()
    add_macros(con)
    reader = REGISTRY["dcgm-prom"]
    assert isinstance(reader, TelemetryReader)
    reader.prepare(con)
    return {table: ([(c, spark_type(t)) for c, t, *_ in con.execute(f"describe {table}").fetchall()],
                    con.execute(f"select * from {table}").fetchall())
            for table in ("dcgm_fields", "telemetry_limits", "gpu_ratings")}


def past_limits(spark, carried: str = "") -> int:
    """As TelemetryReader.beyond_limits then implausible, on `_tel` and `_tel_samples`: the
    readings past their series' limits as `_tel_implausible`, how many; 0 without another pass
    over the samples where no series' groups leave its limits."""
    sql(spark, limits_sql(carried)).createOrReplaceTempView("_tel_bounds")
    if not spark.sql("select coalesce(bool_or(exceeded), false) from _tel_bounds").first()[0]:
        return 0
    return implausible(spark, carried)


def implausible(spark, carried: str = "") -> int:
    """The readings of `_tel_bounds`' series past their limits, kept as `_tel_implausible`: how many."""
    rows = kept(sql(spark, plausible_sql(carried)))
    rows.createOrReplaceTempView("_tel_implausible")
    return rows.count()


def file_counts(spark, scrape_ms: int | None, bounds: bool) -> tuple[bool, int, int, int, int]:
    """Over `_tel` in one job: whether a series' groups leave its limits (with `bounds`, from
    the view `_tel_bounds` past_limits reads; else False), rows read, rejected and loaded, and
    the groups that start at the file's scrape time (0 without one)."""
    at_scrape = f"count_if(t0_ms = {int(scrape_ms)})" if scrape_ms is not None else "0"
    counts = f"""select null as exceeded, coalesce(sum(n_lines), 0) as rows_read, coalesce(sum({REJECTED_LINES}), 0) as rejected,
                        coalesce(sum(case when not bad_metric and not no_gpu then n_good else 0 end), 0) as loaded,
                        {at_scrape} as at_scrape
                 from _tel"""
    if bounds:
        counts += " union all select bool_or(exceeded), null, null, null, null from _tel_bounds"
    row = spark.sql(f"""select coalesce(bool_or(exceeded), false), max(rows_read), max(rejected), max(loaded), max(at_scrape)
                        from ({counts})""").first()
    return bool(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4])


def telemetry_groups(spark, keys: dict[str, str]) -> None:
    """As TelemetryReader.grouped then fold: `_tel_groups`, `_tel_labelsets` and `_tel`."""
    kept(sql(spark, read_sql("10_staging", "stg_telemetry__groups.sql", **keys))).createOrReplaceTempView("_tel_groups")
    kept(sql(spark, read_sql("10_staging", "stg_dcgm__labelsets.sql"))).createOrReplaceTempView("_tel_labelsets")
    kept(sql(spark, read_sql("10_staging", "stg_dcgm__tel.sql"))).createOrReplaceTempView("_tel")


def stage_telemetry(spark, head: Head, reader, options: dict[str, Any], variables: dict) -> SparkStaged:
    telemetry_views(spark)
    notes: list[str] = []
    try:
        if reader.kind == "dcgm-prom":
            name, text, slots, keys, extra = prom_text_samples(spark, head, options)
            scrape_ms = int(extra[1])
        elif reader.kind == "prom-range":
            name, text, slots, keys, extra = prom_range_samples(spark, head)
            scrape_ms = None
        else:
            name, text, slots, keys, extra = prom_csv_samples(spark, head)
            scrape_ms = None
        sql(spark, fill(name, text, {**slots, "row_number": "null::bigint"})).createOrReplaceTempView("_tel_samples")
        telemetry_groups(spark, keys)
        # as TelemetryReader.group: a file with readings past their limits is grouped again
        # without them (each a located reject); whether any are is found in the job that
        # counts the file's rows, which a file within its limits (the norm) then keeps
        sql(spark, limits_sql()).createOrReplaceTempView("_tel_bounds")
        exceeded, rows_read, rejected, loaded, at_scrape = file_counts(spark, scrape_ms, bounds=True)
        limited = exceeded and implausible(spark) > 0
        if limited:
            telemetry_groups(spark, LIMITED_KEYS)
            _, rows_read, rejected, loaded, at_scrape = file_counts(spark, scrape_ms, bounds=False)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - bad bytes or JSON: the user's file
        raise _fail(head, exc) from None
    rejects = empty_table(spark, REJECT_COLUMNS)
    if rejected:
        # the line number (text), the data row (CSV), the sample's ordinal (query_range JSON)
        if reader.kind == "dcgm-prom":   # the lines numbered now (prom_text_samples left them without)
            prom_cols(spark, numbered(spark.read.text(str(head.path)), spark))
        rn = {"dcgm-prom": "line_no", "prom-csv": "_rn"}.get(reader.kind, "row_number() over (order by monotonically_increasing_id())")
        sql(spark, fill(name, text, {**slots, "row_number": rn})).createOrReplaceTempView("_tel_samples_numbered")
        rejects = kept(sql(spark, reject_lines_sql(CHECKED.format(samples="_tel_samples_numbered") if limited else PLAIN_NUMBERED)))
        located = rejects.select("row_number").distinct().count()
        if located != rejected:
            raise RuntimeError(f"{head.path}: {rejected} samples rejected by group but {located} located")
    if at_scrape:
        notes.append(extra[0])
    facts = {table: sql(spark, read_sql("10_staging", model), variables)
             for table, model in PART_MODELS}
    version = reader.sniff(head) or reader.kind
    return SparkStaged(int(rows_read), int(loaded), version, facts, rejects, notes=notes, rows_rejected=int(rejected))


# --- many small files of one kind, staged as one ------------------------------------------------

@dataclass
class SparkBatch:
    """Small dcgm-exporter files staged as one (stage_prom_batch): per file id, in order, rows
    read and samples loaded; the parts of every file, each with its file_id."""

    counts: dict[int, tuple[int, int]]
    facts: dict[str, Any]


def stage_prom_batch(spark, heads: list[Head], file_ids: list[int]) -> SparkBatch | None:
    """dcgm-exporter scrapes of many small files whose samples carry their own times, staged as
    one, as the DuckDB reader's stage_batch: one read of them all, each line keeping its file's
    name through the grouping, each file's GPUs kept apart by their UUIDs prefixed with the
    file's id until the parts are split again. None where only each file's own staging decides:
    a sample without its time or otherwise rejected, a line it cannot parse, a pod's requests
    (keyed by no GPU), a file the read does not name. A file's own staging numbers its lines to
    locate rejects; a batch has none to locate, so its lines go unnumbered (one pass fewer)."""
    from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
    from pyspark.errors import AnalysisException, PySparkException
    from pyspark.sql import functions as F
    paths = [str(h.path) for h in heads]
    telemetry_views(spark)
    spark.read.text(paths).withColumn("filename", F.input_file_name()).createOrReplaceTempView("_batch_lines")
    try:
        names = batch_file_ids(spark, heads, file_ids)
        if names is None:
            return None
        spark.sql("""select null as line_no, element_at(p, 1) as a, element_at(p, 2) as b, element_at(p, 3) as c,
                            element_at(p, 4) as d, size(p) as n_parts, filename
                     from (select split(value, '}') as p, filename from _batch_lines)""").createOrReplaceTempView("raw_prom_cols_all")
        if spark.sql("select count(*) from raw_prom_cols_all where n_parts > 4").first()[0]:
            return None
        spark.sql("select line_no, a, b, c, d, filename from raw_prom_cols_all").createOrReplaceTempView("raw_prom_cols")
        name = "stg_dcgm_prom__samples.sql"
        carried = {"carried": ", filename"}
        sql(spark, fill(name, sql_text("10_staging", name), {"scrape_ms": "null::bigint", "comment_line": COMMENT_LINE,
                                                            "row_number": "null::bigint", **carried})
            ).createOrReplaceTempView("_tel_samples")
        telemetry_groups(spark, {**SERIES_KEYS, **carried})
        # as TelemetryReader.stage_batch: a reading past its limits is a reject, each file's own
        # staging's to locate (a counter that falls is most often a reset, which the batch keeps)
        if past_limits(spark, carried["carried"]):
            return None
        tel = kept(spark.table("_tel").join(names, "filename", "left"))
    except AnalysisException:
        raise
    except (PySparkException, Py4JJavaError):   # bad bytes, a line Spark cannot read: the file's own staging says so
        return None
    tel.createOrReplaceTempView("_tel_batch")
    # each file's counts and its pods' requests in one job; a group of no file (null) is a
    # line the read did not name
    rows = spark.sql(f"""
        select file_id, coalesce(sum(n_lines), 0), coalesce(sum({REJECTED_LINES}), 0),
               coalesce(sum(case when not bad_metric and not no_gpu then n_good else 0 end), 0), count_if(is_request)
        from _tel_batch group by file_id""").collect()
    if any(r[4] for r in rows) or any(r[0] is None for r in rows):
        return None
    counts = {r[0]: (int(r[1]), int(r[2]), int(r[3])) for r in rows}
    if any(rejected for _, rejected, _ in counts.values()) or set(counts) != set(file_ids):
        return None
    spark.sql("select * except (filename, file_id, gpu_uuid), concat(cast(file_id as string), ':', gpu_uuid) as gpu_uuid "
              "from _tel_batch").createOrReplaceTempView("_tel")
    facts = {table: sql(spark, read_sql("10_staging", model)).selectExpr(
                 "cast(substring_index(gpu_uuid, ':', 1) as int) as file_id", "*")
             .withColumn("gpu_uuid", F.expr("substr(gpu_uuid, instr(gpu_uuid, ':') + 1)"))
             for table, model in GPU_PART_MODELS}
    return SparkBatch({i: (counts[i][0], counts[i][2]) for i in file_ids}, facts)


def batch_file_ids(spark, heads: list[Head], file_ids: list[int]):
    """A frame (filename as Spark names it, file_id) over the files of a batch; None where a
    name Spark gives is none of theirs."""
    from pathlib import Path
    from urllib.parse import unquote, urlparse
    ids = {str(Path(h.path).resolve()): i for h, i in zip(heads, file_ids)}
    rows = []
    for (uri,) in spark.sql("select distinct filename from _batch_lines").collect():
        local = str(Path(unquote(urlparse(uri).path) if uri.startswith("file:") else uri).resolve())
        if local not in ids:
            return None
        rows.append((uri, ids[local]))
    return spark.createDataFrame(rows, "filename string, file_id int")
