"""A CSV's text cut into part files at record ends, each knowing how many data rows come before
it, so that DuckDB numbers a large file's rows on every core (issue 24).

DuckDB numbers rows on one thread only (`with ordinality`, or a window), or by the order rows
land in a table, which is file order only when the whole insert keeps it; numbering the lines
afterwards (an UPDATE of lines written in the same transaction) made the commit write every
line again: 15 of the 78 s of a 20M-line CUR. Read as parts, each part is numbered by its own
scan (its first row + ordinality) and the parts are read side by side, so every line is written
once, with its final number, in whatever order the threads finish.

The parts are written by the thread that already reads every byte of the file for its sha256
and its independent record count (sources/linecount.py), from the text it decompressed: a
gzip is inflated once, by ISA-L, instead of again by DuckDB's zlib. They take disk space for the
file's text while it is staged. When their folder runs short of space (or a write fails)
splitting stops, what was written is deleted, and the file is read as it is, the slower way.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

# Large enough that a part's scan start-up is noise, small enough that a file of a few hundred
# MB still becomes several parts and the last ones to finish leave no core idle for long.
PART_BYTES = 64 << 20
# Stop splitting while this much room is left beside the parts (DuckDB spills and writes too).
RESERVE_BYTES = 1 << 30


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
    """Feed the file's text in order, with the counter that counts its records; `parts()` gives
    the part files, or None when splitting stopped (`failed` says why).

    header_lines: physical lines of the header record (skipped in the first part); the header
    is one record, so the data rows before a part are the records before it less one."""

    def __init__(self, folder: Path, header_lines: int, part_bytes: int | None = None,
                 reserve_bytes: int | None = None) -> None:
        self.folder = folder
        self.header_lines = header_lines
        self.part_bytes = part_bytes or PART_BYTES
        self.reserve_bytes = RESERVE_BYTES if reserve_bytes is None else reserve_bytes
        self.done: list[Part] = []
        self.out: BinaryIO | None = None
        self.path = folder         # the open part's file
        self.size = 0              # bytes in the open part
        self.records_before = 0    # records (header included) before the open part
        self.failed: str | None = None

    def feed(self, text: bytes, counter: Counter) -> None:
        """Count `text` and write it, ending a part at the first record end past its size."""
        while text:
            cut = None if self.failed else self._cut(text, counter)
            piece, text = (text, b"") if cut is None else (text[:cut], text[cut:])
            counter.feed(piece)
            self._write(piece)
            if cut is not None:
                self._close(counter.newlines)

    def parts(self) -> list[Part] | None:
        if self.out is not None:
            self._close(None)
        return None if self.failed else self.done

    def _cut(self, text: bytes, counter: Counter) -> int | None:
        """Where in `text` the open part should end (after a line break outside quotes), or None."""
        # The counter decides whether lines end in CR alone at the first line feed, or after 64
        # KiB without one, holding the bytes until then; a file without LF is never cut.
        undecided = counter.cr_only is None and not counter.pending and b"\n" in text
        if not (counter.cr_only is False or undecided) or self.size + len(text) < self.part_bytes:
            return None
        inside, seen = counter.in_quote and counter.quoted, 0
        at = text.find(b"\n", max(self.part_bytes - self.size, 0))
        while at != -1:
            if counter.quoted:
                # a doubled quote inside a field toggles twice: parity alone says inside or not
                inside ^= bool(text.count(b'"', seen, at) & 1)
                seen = at
            if not inside:
                return at + 1
            at = text.find(b"\n", at + 1)
        return None

    def _write(self, piece: bytes) -> None:
        if self.failed or not piece:
            return
        try:
            if self.out is None:
                if shutil.disk_usage(self.folder).free < self.part_bytes + self.reserve_bytes:
                    self._fail(f"less than {(self.part_bytes + self.reserve_bytes) >> 20} MiB free in {self.folder}")
                    return
                path = self.folder / f"part-{len(self.done):05d}.csv"
                self.out = open(path, "wb")
                self.path = path
                self.size = 0
            self.out.write(piece)
            self.size += len(piece)
        except OSError as exc:
            self._fail(f"cannot write {self.folder}: {exc.strerror or exc}")

    def _close(self, records: int | None) -> None:
        """End the open part; `records` is the record count after it (None at the end of the file)."""
        if self.out is None:
            return
        self.out.close()
        self.out, self.size = None, 0
        first = not self.done
        self.done.append(Part(self.path, rows_before=max(self.records_before - 1, 0),
                              skip_lines=self.header_lines if first else 0))
        if records is not None:
            self.records_before = records

    def _fail(self, why: str) -> None:
        self.failed = why
        if self.out is not None:
            self.out.close()
            self.out = None
        for p in self.folder.glob("part-*.csv"):
            p.unlink(missing_ok=True)
        self.done = []
