"""The independent record count (sources/linecount.py) against Python's csv module, whatever the
quoting, line breaks, blank lines and chunk boundaries; and the check that stops a file whose
rows read disagree with it."""
from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from pipelines.warehouse import connect
from sources import REGISTRY
from sources.base import Staged, check_count, read_head
from sources.linecount import LineCounter, scan

DATA = Path(__file__).parent / "data"
FIELD = st.text(alphabet=st.sampled_from(list('ab,"\n\r #é')), max_size=6)


def rfc4180(field: str) -> str:
    """A field as RFC 4180 writes it (quoted when it holds a comma, quote or line break; a lone
    empty field quoted so its record is not blank). Python's csv writer leaves a bare CR
    unquoted under an LF terminator, which no CSV reader (DuckDB included) reads back."""
    if field == "" or any(c in field for c in ',"\r\n'):
        return '"' + field.replace('"', '""') + '"'
    return field


def count(data: bytes, cuts: list[int], precise: bool, quoted: bool = True, comment: bytes | None = None):
    counter = LineCounter(quoted, comment, precise)
    edges = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    for a, b in zip(edges, edges[1:]):
        counter.feed(data[a:b])
    return counter.result()


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.lists(FIELD, min_size=1, max_size=4), max_size=8),
       blanks=st.lists(st.integers(0, 2), min_size=9, max_size=9), trailing=st.integers(0, 3),
       crlf=st.booleans(), cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_records_and_blank_lines_match_the_csv_module(rows, blanks, trailing, crlf, cuts):
    eol = "\r\n" if crlf else "\n"
    buf = io.StringIO(newline="")
    for row, n_blank in zip(rows, blanks):
        buf.write(eol * n_blank)
        buf.write(",".join(rfc4180(f) for f in row) + eol)
    buf.write(eol * trailing)
    data = buf.getvalue().encode()
    parsed = list(csv.reader(io.StringIO(buf.getvalue(), newline="")))
    n_blank = sum(blanks[:len(rows)]) + trailing
    assert len([r for r in parsed if r]) == len(rows)           # the oracle agrees with what was written
    precise = count(data, cuts, precise=True)
    assert (precise.records, precise.blank, precise.content) == (len(rows) + n_blank, n_blank, len(rows))
    fast = count(data, cuts, precise=False)
    assert fast.records == precise.records
    assert fast.blank == trailing        # the fast pass sees the blank lines ending the file


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.sampled_from(["# HELP x y", "# TYPE x gauge", "  # indented", "x 1", 'x{a="b"} 2', ""]), max_size=12),
       cuts=st.lists(st.integers(0, 500), max_size=5))
def test_prometheus_comments_are_counted_apart(lines, cuts):
    data = ("\n".join(lines) + "\n").encode() if lines else b""
    got = count(data, cuts, precise=True, quoted=False, comment=b"#")
    assert got.comments == sum(ln.lstrip().startswith("#") for ln in lines)
    assert got.content - got.comments == sum(bool(ln) and not ln.lstrip().startswith("#") for ln in lines)


def test_cr_only_line_breaks_are_line_breaks():
    """Excel's 'CSV (Macintosh)' ends lines with CR alone."""
    got = count(b'h,x\r1,"a\rb"\r2,c\r\r', [1, 5, 9], precise=True)
    assert (got.records, got.blank, got.content) == (4, 1, 3)


def test_gzip_members_one_after_another(tmp_path):
    path = tmp_path / "two-members.csv.gz"
    path.write_bytes(gzip.compress(b"h\n1\n") + gzip.compress(b"2\n3\n"))
    _, got = scan(path, False, "csv")
    assert got.content == 4


def test_truncated_gzip_is_reported_by_the_count(tmp_path):
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(gzip.compress(b"h\n" + b"1,2\n" * 10_000)[:-20])
    with pytest.raises(InputError, match="truncated or corrupt gzip"):
        scan(path, True, "csv")


def test_non_utf8_byte_is_located_even_in_an_unread_column(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"a,b\n1,x\n2,caf\xe9\n")
    with pytest.raises(InputError, match=r"not UTF-8 text \(line 3: byte 0xe9\)"):
        scan(path, False, "csv")


def test_rows_read_that_differ_from_the_count_stop_the_file(tmp_path):
    """What a reader that lost rows (as DuckDB's sniffer once did: 0 of 26) runs into."""
    path = DATA / "aws_cur" / "cur_comment_marker_ending_every_row.csv"
    head = read_head(path)
    reader = REGISTRY["aws-cur"]
    con = connect(tmp_path / "wh.duckdb")
    _, fast = scan(path, False, reader.dialect(head))
    check_count(reader, con, head, Staged(rows_read=4, format_version="legacy-csv"), fast)
    with pytest.raises(InputError, match="0 rows read, but the file has 4 data rows"):
        check_count(reader, con, head, Staged(rows_read=0, format_version="legacy-csv"), fast)


def test_a_gzip_bomb_is_read_in_bounded_pieces(tmp_path):
    """64 MiB of one byte compress to 64 KiB: decompressed in pieces of at most 16 MiB."""
    from sources.linecount import OUT_MAX, decompressed
    path = tmp_path / "ones.csv.gz"
    path.write_bytes(gzip.compress(b"h\n" + b"1\n" * (32 << 20), compresslevel=9))
    sizes = [len(p) for p in decompressed(iter([path.read_bytes()]), path)]
    assert max(sizes) <= OUT_MAX and sum(sizes) == 2 + (64 << 20)


@settings(max_examples=200, deadline=None)
@given(ends=st.lists(st.sampled_from([b"\n", b"\r\n"]), min_size=1, max_size=12),
       widths=st.lists(st.integers(0, 5), min_size=12, max_size=12), chunk=st.integers(1, 7))
def test_line_break_change_finds_the_first_line_ending_otherwise(tmp_path_factory, ends, widths, chunk):
    """Against a plain walk over the lines, for any chunk size (a CRLF may be split by a chunk
    boundary); reading only up to that line finds it too."""
    import sources.linecount as linecount
    path = tmp_path_factory.mktemp("lb") / "f.csv"
    path.write_bytes(b"".join(b"x" * w + e for w, e in zip(widths, ends)))
    names = {b"\n": "LF", b"\r\n": "CRLF"}
    want = next(((i + 1, names[ends[0]], names[e]) for i, e in enumerate(ends) if e != ends[0]), None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(linecount, "CHUNK", chunk)
        assert linecount.line_break_change(path) == want
        if want is not None:
            assert linecount.line_break_change(path, until=want[0]) == want
