"""The ingest runner: one transaction per file, lineage on every row, nothing lost or doubled.

For each file: hash it; if that content is already loaded, report `unchanged` and touch
nothing. Otherwise detect the format, stage it (structural problems raise InputError before any
write), then in one transaction remove an older version of the same path, load the rows that
pass every check, record the rejects and the source_files row. rows_read = rows_loaded +
rows_rejected is asserted for every file.

A path never loaded before is most likely new content, so it is hashed on a second thread while
DuckDB stages it (hashing a GB of telemetry costs about as much as DuckDB scanning it); if the
hash then shows the content is already loaded, the staging is rolled back and the file is
`unchanged` all the same. A path already loaded is hashed first: re-running over the same
folder must stay a matter of hashing, not parsing. The same read on the second thread counts
the file's records without DuckDB; rows read must match that count (sources/linecount.py).

Small telemetry files of one kind (a fleet's hourly dumps) are staged as one batch in one
transaction (ingest_batch), each still checked, recorded and reported as its own; anything only a
file's own staging decides sends the batch back to this file-by-file way, so the result is the same.

What is stored is what was read: the file's identity (device, inode, size, mtime) is taken before
anything reads it and again just before its commit; a file edited or replaced in between (read
by DuckDB, the scan thread and the head in different states) is refused, never stored with rows
of one version and the sha256 of another (which every later ingest would call `unchanged`).

A run reports every file: committed (`loaded`, `unchanged`), `failed` with its Error, or `not
tried` when an earlier failure stopped the run (ingest_each; keep_going tries them all).
"""
from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, TypeGuard

import duckdb

from core.errors import InputError
from core.sql import one_row
from pipelines.config import Config
from pipelines.deliveries import is_manifest, select_parts
from pipelines.progress import ticking
from pipelines.stage_inputs import apply_config, file_energy_kwh, files_energy_kwh
from pipelines.warehouse import connect, database_path, out_of_memory
from sources import REGISTRY
from sources.base import BatchMiss, Head, Reader, Restage, Staged, check_count, detect, duck_error, read_head
from sources.linecount import scan
from sources.reference_data import load_reference
from sources.tabular import ShortRows
from sources.telemetry import TelemetryReader
from sources.text_parts import TextParts

# In a folder, these are notes and settings, not data (model cards are .md, so .md is read).
SKIP_NAMES = {"readme.md", "provenance.md", "license", "license.md", "meterbook.toml"}
# A warehouse (and its write-ahead log) kept beside the exports is never an input, nor are the
# SQL scripts AWS delivers beside a CUR for Athena or Redshift.
SKIP_SUFFIXES = {".toml", ".duckdb", ".wal", ".sql"}


@dataclass
class FileResult:
    path: str
    sha256: str
    kind: str
    format_version: str | None
    status: str              # loaded | unchanged
    rows_read: int
    rows_loaded: int
    rows_rejected: int
    totals: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "error": None}


@dataclass
class FileStatus:
    """A file of the run that committed nothing: `failed` (with its error) or `not tried` (an
    earlier file failed and the run stopped)."""
    path: str
    status: str              # failed | not tried
    error: InputError | None = None

    def as_json(self) -> dict[str, Any]:
        """The keys of a committed file's result (null where nothing was read), and the Error."""
        empty: dict[str, Any] = dict.fromkeys(f.name for f in fields(FileResult))
        return {**empty, "path": self.path, "status": self.status, "totals": {}, "notes": [],
                "error": str(self.error) if self.error is not None else None}


Outcome = FileResult | FileStatus
# The state of a file on disk: another value after it was read means it changed under the read.
Identity = tuple[int, int, int, int]


def file_identity(path: Path) -> Identity:
    """Device, inode, size and modification time (ns) of the file: an edit in place changes the
    time (and mostly the size), a file replaced by a rename changes the inode."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(path, "cannot read the file", exc.strerror or str(exc), "Check the path and its permissions") from None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def check_unaltered(path: Path, before: Identity) -> None:
    """Refuse a file whose identity changed since `before` (taken before its first read): the
    rows, the sha256 and the record count may each be of another version."""
    after = file_identity(path)
    if after == before:
        return
    if after[:2] != before[:2]:
        what = "replaced by another file"
    elif after[2] != before[2]:
        what = f"size {before[2]} -> {after[2]} bytes"
    else:
        what = "modified: its modification time moved"
    raise InputError(path, "changed while being read", what, "Ingest it again")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        raise InputError(path, "cannot read the file", exc.strerror or str(exc), "Check the path and its permissions") from None
    return h.hexdigest()


def expand(paths: Iterable[str | Path]) -> tuple[list[Path], dict[Path, list[str]]]:
    """Files named, the files under folders named (sorted, hidden files skipped; where a delivery
    manifest says which files are the delivery, those), and the files a glob matches; with notes
    for the first file of each manifest's delivery."""
    out: list[Path] = []
    notes: dict[Path, list[str]] = {}
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
                           and f.suffix not in SKIP_SUFFIXES and f.name.lower() not in SKIP_NAMES)
            files, found_notes = select_parts(p, found)
            out.extend(files)
            notes.update(found_notes)
        elif p.exists():
            if not is_manifest(p):
                out.append(p)
        elif glob.has_magic(str(p)) and (matches := sorted(Path(m) for m in glob.glob(str(p), recursive=True) if Path(m).is_file())):
            # a quoted pattern (the shell would have expanded an unquoted one)
            out.extend(m for m in matches if m.suffix not in SKIP_SUFFIXES and not is_manifest(m))
        else:
            raise InputError(p, "no such file or folder", "", "Check the path; folders are read recursively, patterns like exports/*.csv.gz are expanded")
    return out, notes


def ingest_file(con: duckdb.DuckDBPyConnection, path: Path, kind: str = "auto",
                options: dict[str, Any] | None = None, this_run: set[int] | None = None,
                recorded_as: str | None = None) -> FileResult:
    """Load one file. `this_run` holds the file ids loaded by the same command: parts of one
    delivery (a CUR month split over several files) never replace each other. `recorded_as`:
    the name lineage keeps instead of the file's path (a pulled chunk's query URL: the file is
    scratch); such a file is `unchanged` only where that name holds the same content (two
    chunks may answer the same bytes, an empty matrix, and each must be recorded)."""
    options = options or {}
    this_run = this_run if this_run is not None else set()
    before = file_identity(path)       # before the sha256, the head, the scan and DuckDB read it
    resolved = recorded_as or str(path.resolve())
    seen_path = one_row(con, "select count(*) from source_files where path = ? and status = 'loaded'", [resolved])[0]
    sha: str | None = None
    if seen_path:
        sha = sha256_of(path)
        if done := unchanged(con, path, resolved, sha, same_path=recorded_as is not None):
            return done
    head = read_head(path)
    reader, version = detect(head, kind)
    # One read on a second thread while DuckDB stages the file: the sha256 (unless known) and the
    # independent count of its records that rows read are checked against (sources/linecount.py).
    # Where the reader writes lines straight into their table, a CSV's text is also cut into
    # parts as it is read, which DuckDB loads side by side, numbering rows on every thread
    # (sources/text_parts.py); the lines are written under the file's id, allotted before
    # (and left unused, a gap in the ids, when the file turns out to be loaded already).
    in_place = reader.stages_in_place(head, options)
    folder = part_folder(con) if in_place and reader.dialect(head) == "csv" else None
    splitter = TextParts(folder, head.header_lines, ahead=2 * threads(con)) if folder is not None else None
    scanner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan")
    scanned = scanner.submit(scan, path, sha is None, reader.dialect(head), parts=splitter)
    scanner.shutdown(wait=False)
    try:
        if in_place:
            options = {**options, "file_id": one_row(con, "select nextval('file_id_seq')")[0], "parts": splitter}
        return stage_and_load(con, path, resolved, sha, reader, head, version, options, scanned, this_run, before,
                              same_path=recorded_as is not None)
    finally:
        if splitter is not None:
            splitter.abandon()     # never leave the scan thread waiting for a staging that is over
            scanned.exception()    # and let it end before its folder goes
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def threads(con: duckdb.DuckDBPyConnection) -> int:
    return int(one_row(con, "select current_setting('threads')")[0])


def part_folder(con: duckdb.DuckDBPyConnection, use: str = "parts") -> Path | None:
    """A new hidden folder for a file's parts (or another `use`: a pull's chunks) beside the
    warehouse (the system's temp folder for a warehouse in memory); None when none can be made
    (the file is then read as it is). This process holds the warehouse's lock, so such a folder
    of the same warehouse left there is a killed run's: it goes first."""
    db = database_path(con)
    prefix = f".meterbook-{use}-{Path(db).name}-" if db else f".meterbook-{use}-"
    try:
        if db:
            for stale in Path(db).parent.glob(prefix + "*"):
                shutil.rmtree(stale, ignore_errors=True)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=Path(db).parent if db else None))
    except OSError:
        return None


# A loaded file's source_files row: file_id, path, sha256, kind, format_version, rows read,
# loaded and rejected, (status loaded), loaded_at, delivery_key, (replaced_by null), totals.
RECORD_FILE = "insert into source_files values (?, ?, ?, ?, ?, ?, ?, ?, 'loaded', ?, ?, null, ?)"
# Stagings of one file at most: parts, as it is in file order, the full way, padded.
STAGINGS = 4


def stage_and_load(con: duckdb.DuckDBPyConnection, path: Path, resolved: str, sha: str | None, reader: Reader,
                   head: Head, version: str, options: dict[str, Any], scanned: Future, this_run: set[int],
                   before: Identity, same_path: bool = False) -> FileResult:
    """The file's transaction: stage (again, another way, when a staging asks), check the rows
    read against the independent count, replace what it supersedes, load, record the file (if
    it is still as it was before it was read: `before`)."""
    begin_staging(con)
    try:
        attempt = options
        for _ in range(STAGINGS):
            try:
                staged = reader.stage(con, head, attempt)
                break
            except ShortRows:
                if attempt.get("padded"):
                    raise
                # A CSV row shorter than its header: DuckDB's failed read aborted the transaction,
                # so start it again and read the file padded (slower, on one thread).
                attempt = restage(con, {**attempt, "padded": True})
            except Restage as again:
                # the reader's faster staging met rows only another way handles
                attempt = restage(con, {**attempt, **again.options})
        else:
            raise RuntimeError(f"{path}: staged {STAGINGS} times without a result")
        new_sha, count = scanned.result()
        if sha is None:
            sha = new_sha
            assert sha is not None   # the scan hashed the file: it was asked to when sha was None
            if done := unchanged(con, path, resolved, sha, same_path):
                con.execute("rollback")
                return done
        check_count(reader, con, head, staged, count)
        file_id = options.get("file_id") or one_row(con, "select nextval('file_id_seq')")[0]
        notes = list(staged.notes)
        same_table = [k for k, r in REGISTRY.items() if r.table == reader.table]
        for old_id, old_kind, why in superseded(con, resolved, same_table, staged.delivery_key, this_run):
            REGISTRY[old_kind].remove(con, old_id)
            con.execute("update source_files set status = 'replaced', replaced_by = ? where file_id = ?", [file_id, old_id])
            notes.append(f"replaces file_id {old_id} ({why})")
        rows_loaded = reader.load(con, file_id)
        con.execute("insert into rejects select ?, row_number, column_name, check_name, value, message from _rejects "
                    "order by row_number", [file_id])
        # notes on loaded rows only: a rejected row's reject says what is wrong with it
        con.execute("insert into row_findings select ?, f.* from _row_findings f "
                    "anti join (select distinct row_number from _rejects) r using (row_number) order by row_number", [file_id])
        rows_rejected = one_row(con, "select count(distinct row_number) from _rejects")[0]
        if rows_loaded + rows_rejected != staged.rows_read:
            raise RuntimeError(f"{path}: {staged.rows_read} rows read but {rows_loaded} loaded + {rows_rejected} rejected")
        totals = reader.totals(con, file_id)
        if reader.table == "gpu_hour_parts":
            totals["energy_kwh"] = file_energy_kwh(con, file_id)
        check_unaltered(path, before)    # every read of the file is over (a view over it included)
        con.execute(RECORD_FILE,
                    [file_id, resolved, sha, reader.kind, staged.format_version or version, staged.rows_read, rows_loaded,
                     rows_rejected, datetime.now(timezone.utc).replace(tzinfo=None), staged.delivery_key, json.dumps(totals)])
        con.execute("commit")
    except BaseException as exc:
        if isinstance(parts := options.get("parts"), TextParts):
            parts.abandon()                  # a scan thread waiting for the staging to take parts goes on
        scan_error = scanned.exception()     # the scan thread must not outlive the file's turn
        con.execute("rollback")
        con.execute("reset preserve_insertion_order")
        if isinstance(exc, (InputError, duckdb.Error)):
            check_unaltered(path, before)    # an edit under the read, not what it left, is the file's error
        # bytes that are not UTF-8: the scan names the line and the byte, DuckDB only the line
        if isinstance(exc, InputError) and exc.what == "not UTF-8 text" and isinstance(scan_error, InputError):
            raise scan_error from None
        if is_data_error(exc, path):
            raise duck_error(path, exc) from None
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise out_of_memory(path, "staging the file") from None
        raise
    this_run.add(file_id)
    return FileResult(resolved if same_path else str(path), sha, reader.kind, staged.format_version or version, "loaded",
                      staged.rows_read, rows_loaded, rows_rejected, totals, notes)


def restage(con: duckdb.DuckDBPyConnection, options: dict[str, Any]) -> dict[str, Any]:
    """Roll the file's staging back and open it again; the next staging reads the file as it
    is (the scan thread stops cutting parts nobody will take)."""
    con.execute("rollback")
    if isinstance(parts := options.get("parts"), TextParts):
        parts.abandon()
    begin_staging(con)
    return {**options, "parts": None}


def begin_staging(con: duckdb.DuckDBPyConnection) -> None:
    """Open the file's transaction with empty scratch: rejects (rows not loaded) and row findings
    (rows loaded with a field left null). A staging that failed may have left rows unordered
    (sources.billing_in_place): the next one may number rows by their order."""
    con.execute("reset preserve_insertion_order")
    con.execute("begin transaction")
    clear_scratch(con)
    for table in ("_rejects", "_row_findings"):
        con.execute(f"create or replace temp table {table} (row_number bigint, column_name varchar, "
                    "check_name varchar, value varchar, message varchar)")


def unchanged(con: duckdb.DuckDBPyConnection, path: Path, resolved: str, sha: str,
              same_path: bool = False) -> FileResult | None:
    """The stored result when this content is already loaded (under this or another path; only
    this one when `same_path`)."""
    same = con.execute("""select path, kind, format_version, rows_read, rows_loaded, rows_rejected, totals
                          from source_files where sha256 = ? and status = 'loaded' and (not ? or path = ?)""",
                       [sha, same_path, resolved]).fetchone()
    if not same:
        return None
    notes = [] if same[0] == resolved else [f"same content as {same[0]}, already loaded"]
    return FileResult(str(path) if not same_path else resolved, sha, same[1], same[2], "unchanged", same[3], same[4], same[5],
                      json.loads(same[6]) if same[6] else {}, notes)


def is_data_error(exc: BaseException, path: Path) -> TypeGuard[duckdb.Error]:
    """A DuckDB error caused by the file's bytes (bad encoding or quoting past the sniffed sample,
    a gzip stream cut short), not by our SQL: the user gets one Error: line, not a traceback.
    Binder/catalog/parser errors stay tracebacks - they are our bugs and must be seen."""
    if isinstance(exc, (duckdb.InvalidInputException, duckdb.ConversionException)):
        return True
    return isinstance(exc, duckdb.IOException) and ("gzip" in str(exc).lower() or str(path) in str(exc))


def clear_scratch(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the previous file's staging objects: readers differ in which are views and which tables."""
    for name, kind in con.execute("""
            select view_name, 'view' from duckdb_views()
            where temporary and (starts_with(view_name, '_') or starts_with(view_name, 'raw_'))
            union all
            select table_name, 'table' from duckdb_tables()
            where temporary and (starts_with(table_name, '_') or starts_with(table_name, 'raw_'))
            order by 2 desc""").fetchall():
        # names come from the catalog (ours), but are quoted as identifiers anyway: never pasted raw
        con.execute(f'drop {kind} if exists "{name.replace(chr(34), chr(34) * 2)}"')


def superseded(con: duckdb.DuckDBPyConnection, path: str, kinds: list[str], delivery_key: str | None,
               this_run: set[int]) -> list[tuple[int, str, str]]:
    """Loaded files a new file replaces: the same path with other content, or (billing) an
    earlier delivery of the same accounts and periods - clouds restate a month by re-delivering it.

    `kinds` are the readers filling the same table: a month delivered again in another format
    (legacy CUR, then CUR 2.0 or FOCUS after a migration) is the same charges, so it replaces too.

    Files of one delivery share a folder (CUR: <period>/<assemblyId>/part-N; Azure and FOCUS
    exports: <period>/<runId>/part_N), so a file with the same key in the same folder is another
    part of it, whichever run loads it: a part that arrives late must not replace the others.
    A same-key file from another folder is a re-delivery; two of them in one run are refused,
    since nothing says which is newer and keeping both would count the month twice.
    """
    rows = con.execute("""
        select file_id, kind, path, case when path = ? then 'same path, new content'
                                          else 'restated delivery ' || delivery_key || ', was ' || kind end
        from source_files
        where status = 'loaded' and (path = ? or (list_contains(?, kind) and delivery_key = ? and ? is not null))
        order by file_id""",
        [path, path, kinds, delivery_key, delivery_key]).fetchall()
    out = []
    for file_id, old_kind, old_path, why in rows:
        if old_path != path and os.path.dirname(old_path) == os.path.dirname(path):
            continue
        if file_id in this_run:
            raise InputError(path, f"a second delivery of {delivery_key} in one run",
                             f"also in {os.path.dirname(old_path)}",
                             "Ingest one delivery at a time, oldest first: each later one replaces the earlier")
        out.append((file_id, old_kind, why))
    return out


# Small files of a kind that stages in batches (TelemetryReader.stage_batch) are staged together:
# a file's own staging runs about 30 statements, a tenth of a second whatever its size, so a
# month of a fleet's hourly scrapes (tens of thousands of files) took hours (issue 24). Bigger
# files gain nothing, and a batch is bounded so that its progress still shows.
BATCH_FILE_MAX_BYTES = 32 << 20
BATCH_MAX_BYTES = 512 << 20
BATCH_MAX_FILES = 500


class BatchFile(NamedTuple):
    path: Path
    head: Head
    reader: TelemetryReader
    version: str
    before: Identity         # taken before its head was read (check_unaltered)


def batch_from(files: list[Path], start: int, kind: str, options: dict[str, Any] | None,
               loaded: set[str]) -> list[BatchFile]:
    """The files from `start` on that can be staged as one batch: small, of one reader and
    batch key (TelemetryReader.batch_key: a long CSV's header, say), each path new to the
    warehouse (not in `loaded`, the paths loaded before the run: such a path is hashed first, see
    ingest_file), and no option set (they are a file's own staging's); [] unless two or more.
    Each file is looked at only up to the first that cannot join, so a run whose files never
    batch (or were all loaded before) pays one look per file, not one per file and position."""
    if any(v is not None for v in (options or {}).values()):
        return []
    out: list[BatchFile] = []
    first_key: tuple | None = None
    total = 0
    for f in files[start:start + BATCH_MAX_FILES]:
        try:
            before = file_identity(f)
        except InputError:
            break
        size = before[2]
        # a name DuckDB would read as a pattern (`[`, `*`, `?`) could name other files in a list
        if size > BATCH_FILE_MAX_BYTES or total + size > BATCH_MAX_BYTES or glob.has_magic(str(f)) or str(f.resolve()) in loaded:
            break
        try:
            head = read_head(f)
            reader, version = detect(head, kind)
        except InputError:
            break            # the file's own ingest says what is wrong with it
        if not isinstance(reader, TelemetryReader) or (key := reader.batch_key(head)) is None:
            break
        if out and (reader.kind, key) != (out[0].reader.kind, first_key):
            break
        first_key = key
        out.append(BatchFile(f, head, reader, version, before))
        total += size
    return out if len(out) > 1 else []


# What sends a batch back to staging file by file: a file's own staging decides these (and, for
# an error, stops at that file with its own Error line, the files before it loaded).
BATCH_FALLBACK = (BatchMiss, InputError, duckdb.InvalidInputException, duckdb.ConversionException, duckdb.IOException,
                  duckdb.OutOfMemoryException)


def ingest_batch(con: duckdb.DuckDBPyConnection, batch: list[BatchFile], this_run: set[int]) -> list[FileResult] | None:
    """Load the files of `batch` (batch_from) staged as one, in one transaction; each file is
    checked, recorded and reported as its own ingest would (its sha256 and record count read
    beside DuckDB, rows read against that count, its totals and energy). None, with nothing
    written, where the files must be staged one by one instead (BATCH_FALLBACK)."""
    reader = batch[0].reader
    heads = [b.head for b in batch]
    scanner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan")
    scanned = scanner.submit(lambda: [scan(h.path, True, reader.dialect(h)) for h in heads])
    scanner.shutdown(wait=False)
    begin_staging(con)
    try:
        file_ids = [int(r[0]) for r in con.execute("select nextval('file_id_seq') from range(?)", [len(batch)]).fetchall()]
        staged = reader.stage_batch(con, heads, file_ids)
        scans = scanned.result()
        shas = [str(sha) for sha, _ in scans]      # asked to hash: never None
        if len(set(shas)) < len(shas) or one_row(con, "select count(*) from source_files where status = 'loaded' "
                                                      "and list_contains(?, sha256)", [shas])[0]:
            raise BatchMiss("content already loaded")      # `unchanged`, with its note, is the file's own ingest's
        for head, (rows_read, _), (_, count) in zip(heads, staged, scans):
            if reader.expected_rows(con, head, count, Staged(rows_read, "")) != rows_read:
                raise BatchMiss("rows read differ from the fast count")   # a precise count, or the Error
        reader.load_batch(con)
        energy = files_energy_kwh(con, file_ids)
        totals = reader.totals_batch(con, {file_id: loaded for file_id, (_, loaded) in zip(file_ids, staged)})
        for b in batch:
            check_unaltered(b.path, b.before)     # an edited file's own ingest refuses it, or reads it whole
        results, rows = [], []
        for (path, _, _, version, _), file_id, sha, (rows_read, loaded) in zip(batch, file_ids, shas, staged):
            kept = {**totals[file_id], "energy_kwh": energy[file_id]}
            rows.append([file_id, str(path.resolve()), sha, reader.kind, version, rows_read, loaded, 0,
                         datetime.now(timezone.utc).replace(tzinfo=None), None, json.dumps(kept)])
            results.append(FileResult(str(path), sha, reader.kind, version, "loaded", rows_read, loaded, 0, kept))
        con.executemany(RECORD_FILE, rows)
        con.execute("commit")
    except BaseException as exc:
        scanned.exception()      # the scan thread must not outlive the batch's turn
        con.execute("rollback")
        con.execute("reset preserve_insertion_order")
        if isinstance(exc, BATCH_FALLBACK):
            return None
        raise
    this_run.update(file_ids)
    return results


def ingest_each(con: duckdb.DuckDBPyConnection, paths: Iterable[str | Path], kind: str = "auto",
                options: dict[str, Any] | None = None,
                progress: Callable[[int, int, Outcome], None] | None = None,
                config: Config | None = None, keep_going: bool = False) -> list[Outcome]:
    """Ingest every file, each committed or rolled back whole, and say what became of each: its
    result, or `failed` with its Error; the first failure stops the run (the files after it are
    `not tried`) unless keep_going. The config's telemetry settings (interval, gaps) shape a
    telemetry file's energy total. A path that names nothing stops the run before any file."""
    files, notes = expand(paths)
    load_reference(con)
    apply_config(con, config or Config())
    out: list[Outcome] = []
    this_run: set[int] = set()
    # paths loaded before this run (batch_from); the sha256 check inside a batch stays the judge
    loaded = {r[0] for r in con.execute("select path from source_files where status = 'loaded' and list_contains(?, path)",
                                        [[str(f.resolve()) for f in files]]).fetchall()}

    def report(res: Outcome) -> None:
        out.append(res)
        if progress:
            progress(len(out), len(files), res)

    try:
        while len(out) < len(files):
            i = len(out)
            batch = batch_from(files, i, kind, options, loaded)
            done: list[Outcome] | None = None
            if batch:
                status = f"{files[i]} and {len(batch) - 1} more files of the same kind"
                with ticker(con, f"[{i + 1}-{i + len(batch)}/{len(files)}]", status) if progress else contextlib.nullcontext():
                    batched = ingest_batch(con, batch, this_run)
                done = None if batched is None else list(batched)
            if done is None:
                done = []
                # a batch that must be staged file by file is, all of it: trying again from its
                # second file would stage the rest as a batch again, to the same end
                for f in files[i:i + max(len(batch), 1)]:
                    with ticker(con, f"[{i + len(done) + 1}/{len(files)}]", f) if progress else contextlib.nullcontext():
                        try:
                            done.append(ingest_file(con, f, kind, options, this_run))
                        except InputError as exc:
                            done.append(FileStatus(str(f), "failed", exc))
                            break
            for res in done:
                if isinstance(res, FileResult):
                    res.notes = notes.get(files[len(out)], []) + res.notes
                report(res)
            if isinstance(out[-1], FileStatus) and not keep_going:
                for f in files[len(out):]:
                    report(FileStatus(str(f), "not tried"))
    finally:
        # staging turned off the optimizer that plans IN lists as joins (sources.tabular.file_order)
        con.execute("reset disabled_optimizers")
        con.execute("reset preserve_insertion_order")
    return out


def ingest(con: duckdb.DuckDBPyConnection, paths: Iterable[str | Path], kind: str = "auto",
           options: dict[str, Any] | None = None,
           progress: Callable[[int, int, Outcome], None] | None = None,
           config: Config | None = None) -> list[FileResult]:
    """Ingest every file; the first structural error stops the run (earlier files stay loaded)
    and is raised."""
    outcomes = ingest_each(con, paths, kind, options, progress, config)
    for res in outcomes:
        if isinstance(res, FileStatus) and res.error is not None:
            raise res.error
    return [res for res in outcomes if isinstance(res, FileResult)]


def ingest_into(warehouse: Path, paths: Iterable[str | Path], kind: str = "auto", options: dict[str, Any] | None = None,
                progress: Callable[[int, int, Outcome], None] | None = None,
                config: Config | None = None, keep_going: bool = False) -> list[Outcome]:
    """ingest_each into the warehouse file (into_warehouse)."""
    return into_warehouse(warehouse, lambda con: ingest_each(con, paths, kind, options, progress, config, keep_going))


def into_warehouse(warehouse: Path, run: Callable[[duckdb.DuckDBPyConnection], list[Outcome]]) -> list[Outcome]:
    """`run` on the warehouse file, created on first use. A run that created it and committed
    nothing to it (every file failed, or an error before any file) removes it again: an empty
    warehouse left behind would pass for a real one."""
    missing = [d for d in (warehouse, *warehouse.parents) if not d.exists()]
    con = connect(warehouse)
    failed = True
    try:
        outcomes = run(con)
        failed = any(isinstance(res, FileStatus) for res in outcomes)
        return outcomes
    finally:
        try:
            discard = bool(missing) and failed and not one_row(con, "select count(*) from source_files")[0]
        except duckdb.Error:
            discard = False        # what it holds is unknown: kept
        con.close()
        if discard:
            for leftover in (warehouse, warehouse.with_name(warehouse.name + ".wal")):
                leftover.unlink(missing_ok=True)
            for folder in missing[1:]:      # the folders connect made for it, innermost first
                with suppress(OSError):
                    folder.rmdir()


def print_progress(i: int, n: int, r: Outcome) -> None:
    if isinstance(r, FileStatus):
        print(f"Error: {r.error}" if r.error is not None else f"[{i}/{n}] {r.status:9}  {r.path}", file=sys.stderr)
        return
    extra = f", {r.rows_rejected} rejected" if r.rows_rejected else ""
    print(f"[{i}/{n}] {r.status:9} {r.kind:10} {r.rows_loaded} rows{extra}  {r.path}", file=sys.stderr)


def ticker(con: duckdb.DuckDBPyConnection, prefix: str, path: Path | str,
           every_s: float | None = None) -> contextlib.AbstractContextManager[None]:
    """While one file takes long (a month of CUR or telemetry is minutes), say so every
    `every_s` seconds (pipelines.progress.TICK_S) on stderr, with DuckDB's estimate of how far
    the running statement is."""
    def status() -> str:
        pct = con.query_progress()
        return str(path) + (f", current step {pct:.0f}% done" if pct >= 0 else "")
    return ticking(prefix, status, every_s)
