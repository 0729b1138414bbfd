"""A CSV's text cut into part files at record ends while it is read, each knowing how many data
rows come before it, so that DuckDB numbers a large file's rows on every core (issue 24).

DuckDB numbers rows on one thread only (`with ordinality`, or a window), or by the order rows
land in a table, which is file order only when the whole insert keeps it; numbering the lines
afterwards (an UPDATE of lines written in the same transaction) made the commit write every
line again: 15 of the 78 s of a 20M-line CUR. Read as parts, each part is numbered by its own
scan (its first row + ordinality), the parts are read side by side, and every line is written
once, with its final number, in whatever order the threads finish.

The thread that already reads every byte of the file for its sha256 and its independent record
count (sources/linecount.py) writes the parts from the text it decompressed (a gzip is inflated
once, by ISA-L, instead of again by DuckDB's zlib), while DuckDB loads the parts written so far;
a part is deleted once loaded, and the writer waits while AHEAD parts are waiting, so the parts
never take more than a few hundred MB of disk whatever the file's size.

A part holds a whole number of DuckDB row groups (ROWS_PER_PART data rows): parts loaded side by
side then leave no half-filled row groups behind, which DuckDB's next checkpoint would merge by
writing them again (4.3 s for a 5M-line CUR cut into 64 MB parts). When the folder runs short of
space, or a write fails, splitting stops, what was written is deleted, and the file is read as it
is, the slower way.
"""
from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

if TYPE_CHECKING:
    import numpy as np

# DuckDB's rows per row group (its storage constant, not a setting); a test checks that an
# ingest leaves no partial row group but the last.
DUCKDB_ROW_GROUP = 122_880
# Two row groups, about 90 MB of CUR text: the unit the scan thread hands over.
ROWS_PER_PART = 2 * DUCKDB_ROW_GROUP
# Parts written and not yet loaded, at most (disk bound; DuckDB loads all of them at once).
AHEAD = 4
# Stop splitting while this much room is left beside the parts (DuckDB spills and writes too).
RESERVE_BYTES = 1 << 30
NEWLINE, QUOTE = ord("\n"), ord('"')


@dataclass(frozen=True)
class Part:
    path: Path
    rows_before: int   # data rows of the file before this part: its rows are rows_before + 1, ...
    skip_lines: int    # physical lines at its start that are not data (the header, in the first part)


class Counter(Protocol):
    """What the splitter needs of sources.linecount.LineCounter: its records so far and its
    quote state, as of the bytes it has counted (`pending`: bytes it holds, not yet counted)."""

    quoted: bool
    in_quote: bool
    newlines: int
    cr_only: bool | None
    pending: bytes

    def feed(self, chunk: bytes) -> None: ...


class TextParts:
    """Written by the scan thread (`feed`, then `end`), taken by the staging (`take`).

    header_lines: physical lines of the header record (skipped in the first part); the header is
    one record, so the first part holds one record more than the others."""

    def __init__(self, folder: Path, header_lines: int, rows_per_part: int | None = None,
                 reserve_bytes: int | None = None, ahead: int | None = None) -> None:
        self.folder = folder
        self.header_lines = header_lines
        self.rows_per_part = rows_per_part or ROWS_PER_PART
        self.reserve_bytes = RESERVE_BYTES if reserve_bytes is None else reserve_bytes
        self.ahead = ahead or AHEAD
        self.out: BinaryIO | None = None
        self.path = folder           # the open part's file
        self.written = 0             # parts closed so far
        self.start = 0               # records (header included) before the open part
        self.failed: str | None = None
        self.ended = False
        self.ready: list[Part] = []  # closed and not yet taken
        self.taken: list[Part] = []  # the staging's: the parts it loads now
        self.cond = threading.Condition()

    # --- the scan thread ---------------------------------------------------------------------

    def feed(self, text: bytes, counter: Counter) -> None:
        """Count `text` and write it, ending a part after its last record."""
        in_quote, records = counter.in_quote, counter.newlines
        # The counter decides whether lines end in CR alone at the first line feed, or after 64
        # KiB without one, holding the bytes until then: only text it counted at once can be
        # cut (a file without LF never is).
        whole = counter.cr_only is False or (counter.cr_only is None and not counter.pending)
        counter.feed(text)
        if self.failed:
            self._drop()
            return
        at, ends, used = 0, None, 0    # used: this text's record ends already in closed parts
        while whole and counter.cr_only is False:
            # the k-th record end of this text closes the part: its last record's, or (the first
            # part, when the counter held the file's first bytes until a line feed) the next one
            k = max(self.start + self._records() - records, used + 1)
            if counter.newlines < records + k:
                break
            if ends is None:
                ends = record_ends(text, in_quote if counter.quoted else None)
            cut = int(ends[k - 1]) + 1
            self._write(text[at:cut])
            if self.failed:
                self._drop()
                return
            self._close(records + k)
            at, used = cut, k
        self._write(text[at:])

    def end(self) -> None:
        """The file is read (or its read failed): the last part is closed, a waiting take returns."""
        if self.failed:
            self._drop()
        elif self.out is not None:
            self._close(None)
        with self.cond:
            self.ended = True
            self.cond.notify_all()

    # --- the staging ---------------------------------------------------------------------------

    def take(self) -> list[Part] | None:
        """The parts written since the last take (waiting for one); [] once the file is read and
        every part taken; None when splitting stopped: the file must be read as it is."""
        with self.cond:
            while not self.ready and not self.ended and not self.failed:
                self.cond.wait()
            if self.failed:
                return None
            got, self.ready = self.ready, []
            self.cond.notify_all()
            return got

    def abandon(self) -> None:
        """The staging gives up on the parts (or failed): the scan thread stops writing them and
        never waits for a take again."""
        self._fail("abandoned")

    # --- inside ----------------------------------------------------------------------------------

    def _records(self) -> int:
        """Records in a whole part: its data rows, and the header in the first."""
        return self.rows_per_part + (0 if self.written else 1)

    def _write(self, piece: bytes) -> None:
        if self.failed or not piece:
            return
        try:
            if self.out is None:
                with self.cond:
                    # hold back while the staging has enough to load (disk stays bounded)
                    while len(self.ready) >= self.ahead and not self.failed:
                        self.cond.wait()
                if self.failed:
                    return
                if shutil.disk_usage(self.folder).free < self.reserve_bytes:
                    self._fail(f"less than {self.reserve_bytes >> 20} MiB free in {self.folder}")
                    self._drop()
                    return
                self.path = self.folder / f"part-{self.written:05d}.csv"
                self.out = open(self.path, "wb")
            self.out.write(piece)
        except OSError as exc:
            self._fail(f"cannot write {self.folder}: {exc.strerror or exc}")
            self._drop()

    def _close(self, records: int | None) -> None:
        """End the open part; `records`: the file's records up to its end (None at the file's end)."""
        if self.out is None:
            return
        self.out.close()
        self.out = None
        part = Part(self.path, rows_before=max(self.start - 1, 0), skip_lines=0 if self.written else self.header_lines)
        self.written += 1
        if records is not None:
            self.start = records
        with self.cond:
            self.ready.append(part)
            self.cond.notify_all()

    def _fail(self, why: str) -> None:
        with self.cond:
            if not self.failed:
                self.failed = why
            self.ready = []
            self.cond.notify_all()

    def _drop(self) -> None:
        """Scan thread only: close the open part and delete every part file (splitting stopped)."""
        if self.out is not None:
            self.out.close()
            self.out = None
        for p in self.folder.glob("part-*.csv"):
            p.unlink(missing_ok=True)


def record_ends(text: bytes, in_quote: bool | None) -> np.ndarray:
    """Offsets of the line feeds in `text` that end a record: all of them, or (CSV quoting,
    `in_quote` the state at the text's start) those with an even number of quotes before them
    in the file; a doubled quote inside a field counts twice, so parity alone tells."""
    # imported on the scan thread, as in sources.linecount.newlines
    import numpy as np
    data = np.frombuffer(text, dtype=np.uint8)
    ends = np.flatnonzero(data == NEWLINE)
    if in_quote is None or not (in_quote or QUOTE in data):
        return ends
    quotes = np.flatnonzero(data == QUOTE)
    before = np.searchsorted(quotes, ends) + int(in_quote)
    return ends[before % 2 == 0]
