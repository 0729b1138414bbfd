"""An independent count of a file's records, without DuckDB: what every reader's rows read is
checked against (issue 15). DuckDB's CSV sniffer once took ` # notsecret` at the end of every
CUR row for a comment marker and read 0 of 26 rows without a word; a plain byte count cannot
make that mistake, because it knows nothing but line breaks and (for CSV) quotes.

One streaming pass over the (decompressed) bytes in 256 KiB chunks, in C-speed bytes operations:
no per-line Python. Line breaks inside a quoted CSV field are not record breaks; blank records
(nothing but an optional CR) are counted apart, since DuckDB skips them; for line formats with
a comment prefix (Prometheus text), comment lines are counted apart too.
"""
from __future__ import annotations

import codecs
import hashlib
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, cast

from isal import isal_zlib

from core.errors import InputError
from sources.text_parts import TextParts

# Read and inflate in pieces that stay in the core's cache while the sha256, the UTF-8 check and
# the line count each pass over them: 256 KiB pieces took 8-10 % less CPU than 1 MiB ones for
# plain text, and half for gzip, whose inflater copies the input it has not used yet at every
# call (issue 24; measured on 1.2-2.2 GB of telemetry and a 5M-line CUR .gz).
CHUNK = 256 << 10
OUT_MAX = 256 << 10
# Carried between chunks so a blank or comment line cut by a chunk boundary is still seen whole;
# a comment may be indented by up to TAIL - 2 blanks.
TAIL = 64
CR_PROBE = 64 * 1024
# isal's stubs type its error as an instance of Exception; it is the exception class
INFLATE_ERROR = cast(type[Exception], isal_zlib.error)
BLANK = re.compile(rb"(?=(\n\r?\n))")


@dataclass(frozen=True)
class LineCount:
    records: int     # records (CSV: quote-aware), blank ones included
    blank: int       # records with no content but an optional CR (only trailing ones unless `precise`)
    comments: int    # records whose first non-blank character is the comment prefix
    precise: bool    # blank lines and indented comments counted too (a slower pass)

    @property
    def content(self) -> int:
        """Records with something in them: the rows a reader must account for."""
        return self.records - self.blank


class LineCounter:
    """Feed bytes in order; `result()` gives the count. `quoted`: CSV quoting with '"' (a doubled
    quote inside a field toggles twice, so parity alone tracks whether a byte is inside a field).

    The fast pass (precise=False) counts line breaks, blank lines at the end of the file and,
    with a comment prefix, lines starting with it: two bytes operations per chunk. Blank lines
    elsewhere and indented comments cost a regex search per chunk (as much again as
    decompressing), so they are counted only when a reader asks again after a fast count
    disagreed with its rows.
    """

    def __init__(self, quoted: bool, comment: bytes | None = None, precise: bool = False) -> None:
        self.quoted = quoted
        self.precise = precise
        self.prefix = b"\n" + comment if comment else None
        self.comment = re.compile(rb"(?=(\n[ ]{0,%d}%s))" % (TAIL - 2, re.escape(comment))) if comment else None
        self.in_quote = False
        self.newlines = 0
        self.blank = 0
        self.comments = 0
        self.tail = b"\n"      # a virtual line break before the first byte: line 1 starts a line
        self.last = b""
        self.cr_only: bool | None = None
        self.pending = b""

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        if self.cr_only is None:
            # Excel's "CSV (Macintosh)" ends lines with CR alone. Decided once the file shows an
            # LF, or 64 KiB without one, or at its end: until then the bytes wait.
            self.pending += chunk
            if b"\n" not in self.pending and len(self.pending) < CR_PROBE:
                return
            self._decide()
            return
        self._feed(chunk)

    def _decide(self) -> None:
        self.cr_only = b"\n" not in self.pending and b"\r" in self.pending
        pending, self.pending = self.pending, b""
        self._feed(pending)

    def _feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        if self.cr_only:
            chunk = chunk.replace(b"\r", b"\n")
        self.last = chunk[-1:]
        outside = self._outside(chunk)
        self.newlines += newlines(outside)
        if self.precise:
            text = self.tail + outside
            start = len(self.tail)
            # a match is new when it ends past the carried tail (the ones inside it were counted)
            self.blank += sum(1 for m in BLANK.finditer(text) if m.end(1) > start)
            if self.comment is not None:
                self.comments += sum(1 for m in self.comment.finditer(text) if m.end(1) > start)
            self.tail = text[-TAIL:]
        else:
            # a two-byte count costs twice a one-byte search: most chunks of a timestamped
            # dump hold no comment at all
            if self.prefix is not None and self.prefix[1:] in outside:
                self.comments += (self.tail[-1:] + outside[:len(self.prefix) - 1]).count(self.prefix) + outside.count(self.prefix)
            self.tail = (self.tail + outside[-TAIL:])[-TAIL:]

    def _outside(self, chunk: bytes) -> bytes:
        """The chunk's bytes outside quoted fields; each quoted stretch becomes one 'Q' so that a
        record made of a quoted field alone does not look blank."""
        if not self.quoted or (not self.in_quote and b'"' not in chunk):
            return chunk
        parts = chunk.split(b'"')
        # a chunk that starts inside a quoted field starts with that field's 'Q'
        kept = [b"", *parts[1::2]] if self.in_quote else parts[0::2]
        if len(parts) % 2 == 0:
            self.in_quote = not self.in_quote
        return b"Q".join(kept)

    def result(self) -> LineCount:
        if self.cr_only is None:
            self._decide()
        records = self.newlines + (1 if self.last and self.last != b"\n" else 0)   # a last line without its break
        blank = self.blank
        if not self.precise and self.last:
            # blank lines at the very end (common, and cheap to see): the run of line breaks
            # ending the file, less the one closing the last line
            run = re.search(rb"(?:\r?\n)+$", self.tail)
            blank = max(run.group(0).count(b"\n") - 1, 0) if run else 0
        return LineCount(records=records, blank=blank, comments=self.comments, precise=self.precise)


def newlines(data: bytes) -> int:
    """Line feeds in `data`. numpy compares a whole chunk in SIMD, about four times as fast as
    bytes.count, whose one-byte count is a plain loop: the count reads every byte of every file
    on the thread beside DuckDB, so its cost comes out of the ingest's two cores."""
    # imported here, on the scan thread: 40 ms off every ingest's start
    import numpy as np
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == NEWLINE))


NEWLINE = ord("\n")


class Utf8Check:
    """Every byte must be UTF-8, also in columns no reader selects (DuckDB checks only the cells
    it materialises). ASCII chunks, the usual case, cost one pass of bytes.isascii(). The line
    of a bad byte is counted only when there is one, by reading the text again up to it
    (`reread`): counting line breaks in every chunk just in case cost as much as the check."""

    def __init__(self, path: Path, reread: Callable[[], Iterator[bytes]]) -> None:
        self.path = path
        self.reread = reread
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.offset = 0

    def feed(self, chunk: bytes) -> None:
        if not (chunk.isascii() and not self.decoder.getstate()[0]):
            try:
                self.decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                raise InputError(self.path, "not UTF-8 text", f"line {self.line_at(self.offset + exc.start)}: "
                                 f"byte 0x{chunk[exc.start]:02x}", "Save or export the file as UTF-8") from None
        self.offset += len(chunk)

    def line_at(self, offset: int) -> int:
        """The 1-based line holding the text's byte `offset`."""
        lines = seen = 0
        for text in self.reread():
            lines += text[:max(offset - seen, 0)].count(b"\n")
            seen += len(text)
            if seen > offset:
                break
        return lines + 1


def decompressed(chunks: Iterator[bytes], path: Path) -> Iterator[bytes]:
    """gzip members one after another (concatenated .gz files are legal and common), in pieces
    of at most OUT_MAX bytes whatever the compression ratio (bounded memory). ISA-L's inflate
    (zlib's interface) takes half zlib's time: this thread reads every byte beside DuckDB."""
    d = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)
    started = pending = False
    try:
        for data in chunks:
            while data or pending:
                started = started or bool(data)
                out = d.decompress(data, OUT_MAX)
                if out:
                    yield out
                if d.eof:
                    data, pending, started = d.unused_data, False, False
                    d = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)
                else:
                    # a full piece may leave output inside the inflater with no input left: ask again
                    data, pending = d.unconsumed_tail, len(out) == OUT_MAX
    except INFLATE_ERROR as exc:
        raise InputError(path, "truncated or corrupt gzip", str(exc), "Download or copy the file again") from None
    if started:
        raise InputError(path, "truncated or corrupt gzip", "the last gzip member ends early", "Download or copy the file again")


def text_of(path: Path, raw: Iterator[bytes]) -> Iterator[bytes]:
    """A file's text from its raw chunks: decompressed when it is gzip (by its first bytes)."""
    first = next(raw, b"")
    chunks = itertools.chain([first], raw)
    return decompressed(chunks, path) if first[:2] == b"\x1f\x8b" else chunks


def raw_chunks(fh: BinaryIO) -> Iterator[bytes]:
    return iter(lambda: fh.read(CHUNK), b"")


def scan(path: Path, hash_it: bool, dialect: str | None, precise: bool = False,
         parts: TextParts | None = None) -> tuple[str | None, LineCount | None]:
    """One read of the file: its sha256 (of the bytes as stored) and/or its record count (of the
    decompressed text) in the reader's dialect ('csv', 'lines', 'prom'); either may be skipped.
    `parts` (with a dialect): the text is also cut into part files at record ends."""
    h = hashlib.sha256() if hash_it else None
    counter = None if dialect is None else LineCounter(quoted=dialect == "csv", comment=b"#" if dialect == "prom" else None,
                                                        precise=precise)
    try:
        with open(path, "rb") as fh:

            def hashed() -> Iterator[bytes]:
                for chunk in raw_chunks(fh):
                    if h is not None:
                        h.update(chunk)
                    yield chunk

            if counter is None:
                for _ in hashed():
                    pass
            else:
                utf8 = Utf8Check(path, lambda: reread(path))
                for text in text_of(path, hashed()):
                    utf8.feed(text)
                    if parts is None:
                        counter.feed(text)
                    else:
                        parts.feed(text, counter)
    except OSError as exc:
        raise InputError(path, "cannot read the file", exc.strerror or str(exc), "Check the path and its permissions") from None
    finally:
        if parts is not None:
            parts.end()     # read or failed: the staging waiting for parts goes on
    return (h.hexdigest() if h is not None else None), (counter.result() if counter is not None else None)


def reread(path: Path) -> Iterator[bytes]:
    """The file's text once more (to locate a bad byte)."""
    with open(path, "rb") as fh:
        yield from text_of(path, raw_chunks(fh))


LONE_LF = re.compile(rb"(?<!\r)\n")
BREAK_NAMES = {b"\n": "LF", b"\r\n": "CRLF"}


def line_break_change(path: Path, until: int | None = None) -> tuple[int, str, str] | None:
    """The first line ended by another break than the first line (LF, CRLF): its 1-based number
    and the two breaks' names; None when all agree (up to line `until`, when given). Read only to
    explain a parse DuckDB gave up on: its CSV parser keeps the break it saw first and fails
    where it changes, naming no line or blaming a quote."""
    first: bytes | None = None
    lines, carry = 0, b""     # line feeds before `text`; the last byte before it (a CR, maybe)
    for text in reread(path):
        data = carry + text
        if first is None and (nl := data.find(b"\n")) >= 0:
            first = b"\r\n" if data[nl - 1:nl] == b"\r" else b"\n"
        if first == b"\n":
            at = data.find(b"\r\n")      # from the carried byte: a CR may end the last chunk
            lf = at + 1 if at >= 0 else -1
        elif first == b"\r\n":
            m = LONE_LF.search(data, len(carry))     # the lookbehind still sees the carried byte
            lf = m.start() if m else -1
        else:
            lf = -1
        if lf >= 0:
            other = b"\r\n" if first == b"\n" else b"\n"
            return lines + data[len(carry):lf].count(b"\n") + 1, BREAK_NAMES[first or b"\n"], BREAK_NAMES[other]
        lines += text.count(b"\n")
        carry = text[-1:]
        if until is not None and lines >= until:
            break
    return None
