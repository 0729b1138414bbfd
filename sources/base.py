"""Reader registry and format detection.

A reader recognises its format from the first bytes of a file (`sniff`), and stages the file
into two temp tables the runner loads in one transaction: `_staged` (typed rows in the target
table's shape, with `row_number`) and `_rejects` (row-level failures with their location).
Structural problems raise InputError before anything is written.
"""
from __future__ import annotations

import csv
import gzip
import io
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from core.errors import InputError
from core.sql import one_row
from sources.bounded import LimitError, load_json
from sources.linecount import LineCount, line_break_change, scan

HEAD_BYTES = 256 * 1024


@dataclass(frozen=True)
class Head:
    """What detection may look at: the first bytes (decompressed) and, for CSV, the header."""

    path: Path
    data: bytes
    text: str
    columns: tuple[str, ...]
    gzip: bool = False
    parquet: bool = False
    header_lines: int = 1     # physical lines of the CSV header record (a quoted name may hold a line break)


class Restage(Exception):
    """A reader's fast staging met something only its full staging handles: the runner rolls the
    file's transaction back and stages it again with `options` added (a second read of the file)."""

    def __init__(self, options: dict[str, Any], why: str) -> None:
        super().__init__(why)
        self.options = options


@dataclass
class Staged:
    """What a reader tells the runner about the file it staged."""

    rows_read: int
    format_version: str
    delivery_key: str | None = None   # set where a newer delivery replaces an older one
    notes: list[str] = field(default_factory=list)
    expected_rows: int | None = None  # rows by the reader's own line count (not DuckDB), when it keeps one
    header_records: int = 1           # CSV records that were headers (concatenated CodeCarbon files: one per part)


class BatchMiss(Exception):
    """A batch of files staged as one met what only each file's own staging handles (a reject,
    a count to check again, content already loaded): the runner rolls the batch back and
    stages its files one by one, which decides as it always has."""


class Reader:
    kind: str = ""
    table: str = ""            # the fact table rows land in
    staged: str = "_staged"    # the relation load() reads: staged rows, possibly joined to references
    description: str = ""

    def sniff(self, head: Head) -> str | None:   # pragma: no cover - interface
        """The format version if this reader recognises the file, else None."""
        raise NotImplementedError

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:  # pragma: no cover
        raise NotImplementedError

    def stages_in_place(self, head: Head, options: dict[str, Any]) -> bool:
        """Whether stage() writes rows straight into the fact table (sources.billing_in_place)."""
        return False

    def load(self, con: duckdb.DuckDBPyConnection, file_id: int) -> int:
        """Insert the staged rows that passed every check; returns how many source rows that is.

        Only the columns the staging model produced are inserted (the rest take their defaults).
        A source row may become several lines (a GCP row and its credits): they share row_number.
        """
        staged = {r[0] for r in con.execute(f"describe {self.staged}").fetchall()}
        cols = [r[0] for r in con.execute(
            "select column_name from information_schema.columns where table_name = ? and column_name <> 'file_id' "
            "order by ordinal_position", [self.table]).fetchall() if r[0] in staged]
        col_sql = ", ".join(f's."{c}"' for c in cols)
        con.execute(
            f'insert into {self.table} (file_id, {", ".join(cols)}) '
            f"select ?, {col_sql} from {self.staged} s anti join (select distinct row_number from _rejects) r using (row_number)",
            [file_id])
        return one_row(con, f"select count(distinct row_number) from {self.table} where file_id = ?", [file_id])[0]

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        return {}

    def dialect(self, head: Head) -> str | None:
        """How the independent count (sources/linecount.py) reads this file: 'csv' (quote-aware),
        'lines', 'prom' (lines, '#' comments), or None when rows are not lines."""
        return None

    def expected_rows(self, con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None, staged: Staged) -> int | None:
        """The data rows the file holds by that count (None: this reader has no count to offer)."""
        return None

    def remove(self, con: duckdb.DuckDBPyConnection, file_id: int) -> None:
        con.execute(f"delete from {self.table} where file_id = ?", [file_id])


REGISTRY: dict[str, Reader] = {}


def register(cls: type[Reader]) -> type[Reader]:
    """Class decorator: one instance of each reader is kept, by kind."""
    REGISTRY[cls.kind] = cls()
    return cls


def read_head(path: Path) -> Head:
    """Read enough of a file to recognise it; unreadable or compressed-but-broken files stop here."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(HEAD_BYTES)
    except OSError as exc:
        raise InputError(path, "cannot read the file", exc.strerror or str(exc), "Check the path and its permissions") from None
    is_gzip = raw[:2] == b"\x1f\x8b"
    if is_gzip:
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, HEAD_BYTES)
        except zlib.error as exc:
            raise InputError(path, "corrupt gzip data", f"in the first {HEAD_BYTES // 1024} KiB: {exc}",
                             "Download or copy the file again") from None
    if raw[:4] == b"PAR1":
        return Head(path, raw, "", parquet_columns(path), gzip=is_gzip, parquet=True)
    text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    if text.lstrip().startswith("{"):
        try:
            keys = json_keys(text)
        except LimitError as exc:
            raise exc.at(path) from None
        return Head(path, raw, text, keys, gzip=is_gzip)
    columns, lines = csv_header(text)
    return Head(path, raw, text, columns, gzip=is_gzip, header_lines=lines)


def json_keys(text: str) -> tuple[str, ...]:
    """Keys of the first JSON-lines record, nested ones also as parent.child (GCP exports nest);
    LimitError when the record nests past the input limits (sources/bounded.py)."""
    try:
        first = load_json(text.lstrip().splitlines()[0], "the first JSON record")
    except (ValueError, IndexError):
        return ()
    if not isinstance(first, dict):
        return ()
    keys = list(first)
    keys += [f"{k}.{c}" for k, v in first.items() if isinstance(v, dict) for c in v]
    return tuple(keys)


def csv_header(text: str) -> tuple[tuple[str, ...], int]:
    """The first CSV record's fields (stripped) and how many physical lines it spans."""
    # an empty first line: the text starts with a line break (as str.splitlines() breaks lines;
    # splitting the whole head to look at its first line cost a millisecond a file)
    if not text.strip() or text[0] in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029":
        return (), 1
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        row = next(reader)
    except (csv.Error, StopIteration):
        return (), 1
    return tuple(c.strip() for c in row), max(reader.line_num, 1)


def parquet_columns(path: Path) -> tuple[str, ...]:
    try:
        rows = duckdb.execute("select name from parquet_schema(?) where name <> 'schema'", [str(path)]).fetchall()
    except duckdb.Error as exc:
        raise InputError(path, "unreadable Parquet file", str(exc).splitlines()[0], "Export the file again") from None
    return tuple(r[0] for r in rows)


def detect(head: Head, kind: str = "auto") -> tuple[Reader, str]:
    """Pick the reader: the one named by --kind, else the first whose sniff recognises the file."""
    if kind != "auto":
        reader = REGISTRY.get(kind)
        if reader is None:
            raise InputError(head.path, f"unknown --kind {kind!r}", f"known: {', '.join(sorted(REGISTRY))}",
                             "Pass one of the known kinds, or --kind auto")
        version = reader.sniff(head)
        if version is None:
            guess = next((r.kind for r in REGISTRY.values() if r.sniff(head)), None)
            hint = f"it looks like {guess}; pass --kind {guess}" if guess else f"check that it is a {reader.description}"
            article = "an" if kind[0] in "aeiou" else "a"
            raise InputError(head.path, f"not {article} {kind} file", "header does not match", hint[0].upper() + hint[1:])
        return reader, version
    if not head.data.strip(b"\xef\xbb\xbf \r\n\t"):
        raise InputError(head.path, "empty file", "0 bytes of content", "Export the data again, or leave this file out")
    for reader in REGISTRY.values():
        version = reader.sniff(head)
        if version is not None:
            return reader, version
    shown = ", ".join(head.columns[:4]) if head.columns else head.text[:40].replace("\n", " ")
    # A binary file has no line breaks: its "header" is the whole head, up to 256 KiB on one line;
    # cut what is printed, escapes included (a control byte prints as four characters), so the
    # Error stays one readable line; the kinds are too many to list there (--help lists them)
    shown = repr(shown)
    shown = shown if len(shown) <= 80 else shown[:80] + "..."
    raise InputError(head.path, "not a known input format", f"starts with: {shown}",
                     "Pass --kind (meterbook ingest --help lists the kinds), or check that this is the export you meant")


LINE_AT = re.compile(r"\bline\b\s*:?\s*(\d+)", re.IGNORECASE)


def duck_error(path: Path, exc: Exception, fix: str = "Fix or re-export the file") -> InputError:
    """Turn a DuckDB read error into an Error: line that names the place when DuckDB gives it."""
    msg = str(exc)
    # DuckDB quotes the offending line ("Original Line: ...", up to megabytes of the user's data):
    # leave it out, and keep the sentence after the location, which says what is wrong.
    # DuckDB's "LINE 1: <query>" and its caret point into meterbook's own SQL, not the user's file.
    lines = [ln.strip() for ln in msg.splitlines()
             if ln.strip() and not ln.lstrip().startswith(("Original Line", "LINE ")) and ln.strip().strip("^")]
    # a location ("CSV Error on Line: 12"), not a setting that names lines ("new_line = \n")
    where = next((ln for ln in lines if LINE_AT.search(ln)), lines[0] if lines else "")
    if len(lines) > 1 and lines[0] == where and not lines[1].startswith(("Possible Solution", "file =")):
        where += ": " + lines[1]
    # A truncated .gz or non-UTF-8 bytes are the common causes; name them so the fix is obvious
    # (DuckDB raises both from inside the read, long after detection looked at the first bytes).
    low = msg.lower()
    if "gzip" in low:
        return InputError(path, "truncated or corrupt gzip", msg.splitlines()[0][:200], "Download or copy the file again")
    if "encoding" in low or "utf-8" in low or "unicode" in low:
        return InputError(path, "not UTF-8 text", where[:200], "Save or export the file as UTF-8")
    if (change := changed_line_break(path, low, where)) is not None:
        line, was, now = change
        return InputError(path, f"line breaks change from {was} to {now}", f"line {line}",
                          "Convert the file to one kind of line break (dos2unix, say) and ingest it again")
    return InputError(path, "cannot parse the file", where[:200], fix)


def changed_line_break(path: Path, low: str, where: str) -> tuple[int, str, str] | None:
    """Where a CSV parse error is a change of line break (LF to CRLF or back) at or before the
    line DuckDB blames: then its own words (an invalid state, a quote left open by the CR) miss
    the cause. Looked for only on those two errors (not on a row's field count, which a padded
    read handles), and only up to that line."""
    if "state machine reached an invalid state" in low:
        return line_break_change(path)
    if "unterminated quote" in low:
        blamed = int(at.group(1)) if (at := LINE_AT.search(where)) else None
        change = line_break_change(path, blamed)
        return change if change is not None and (blamed is None or change[0] <= blamed) else None
    return None


def gzip_ok(path: Path) -> None:
    """A truncated gzip only shows itself at the end; check the whole stream before any write."""
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(path, "truncated or corrupt gzip", str(exc), "Download or copy the file again") from None


def check_count(reader: Reader, con: duckdb.DuckDBPyConnection, head: Head, staged: Staged, count: LineCount | None) -> None:
    """Rows read must be the rows the file holds by a count that never went through DuckDB:
    the reader's own (Staged.expected_rows), else the line count in the reader's dialect.

    A fast count knows only the blank lines ending the file; when it disagrees, the file is
    counted again with all blank lines and indented comments (a second pass, paid only by such
    files)."""
    rows_read = staged.rows_read
    if staged.expected_rows is not None:
        count = None
    expected = staged.expected_rows if staged.expected_rows is not None else reader.expected_rows(con, head, count, staged)
    if expected is None or expected == rows_read:
        return
    if count is not None and not count.precise:
        _, count = scan(head.path, False, reader.dialect(head), precise=True)
        expected = reader.expected_rows(con, head, count, staged)
        if expected == rows_read:
            return
    raise InputError(head.path, f"{rows_read} rows read, but the file has {expected} data rows",
                     "records counted by their line breaks without DuckDB, header and blank lines left out",
                     "Nothing was loaded. Check the file's quoting (an unclosed quote joins lines) and that it is the "
                     "format detected; if it is, report the file")
