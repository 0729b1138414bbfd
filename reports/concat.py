"""Concatenate PDFs laid out in parts into one report, with qpdf (through pikepdf).

qpdf rewrites the cross-reference table and numbers the objects itself, so the file is sound
whatever the parts hold (pypdf's merge warned "Object count exceeds defined trailer size" on our
front matter). The same parts give the same bytes: qpdf's numbering follows the content, and the
trailer /ID that PDF/A requires is derived from the content too, not from the clock.
"""
from __future__ import annotations

import hashlib
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pikepdf

from core.atomic import replace_file


def concatenate_pdfs(parts: list[Path], out: Path) -> Path:
    """Concatenate PDFs with qpdf (pikepdf) and delete them. The first keeps its catalog (PDF/A
    output intent, XMP metadata, attached files); every part brings its pages, bookmarks (nested
    under the first part's last top-level one, the report title) and named destinations. Parts
    embed the same fonts and colour profile: each is kept once."""
    with ExitStack() as stack:
        pdf = stack.enter_context(pikepdf.open(parts[0]))
        marks, dests = _bookmarks(pdf, 0), _destinations(pdf, pdf, 0)
        first = len(marks)
        for path in parts[1:]:
            src = stack.enter_context(pikepdf.open(path))   # qpdf copies stream data at save time
            offset = len(pdf.pages)
            pdf.pages.extend(src.pages)
            marks += _bookmarks(src, offset)
            dests += _destinations(src, pdf, offset)
        with pdf.open_outline() as outline:
            outline.root[:] = marks[:first]
            # as in a document laid out whole: later parts' headings under the report title
            (outline.root[-1].children if first else outline.root).extend(marks[first:])
        if dests:
            if "/Names" not in pdf.Root:
                pdf.Root.Names = pikepdf.Dictionary()
            names = pdf.Root.Names
            tree = pikepdf.NameTree(names.Dests) if "/Dests" in names else pikepdf.NameTree.new(pdf)
            names.Dests = tree.obj
            for name, dest in dests:
                tree[name] = dest
        _share_resources(pdf)
        # deterministic_id: the trailer /ID PDF/A requires, derived from the content, not the clock
        replace_file(out, lambda tmp: pdf.save(tmp, deterministic_id=True, object_stream_mode=pikepdf.ObjectStreamMode.generate))
    for path in parts:
        path.unlink()
    return out


def _page_index(src: pikepdf.Pdf) -> dict[tuple[int, int], int]:
    return {page.obj.objgen: i for i, page in enumerate(src.pages)}


def _bookmarks(src: pikepdf.Pdf, offset: int) -> list[pikepdf.OutlineItem]:
    """src's outline rebuilt for pdf, where its pages start at `offset`."""
    where = _page_index(src)

    def copy(item):
        dest = item.destination
        new = pikepdf.OutlineItem(str(item.title), offset + where[dest[0].objgen], pikepdf.PageLocation.XYZ,
                                  left=float(dest[2]), top=float(dest[3])) if isinstance(dest, pikepdf.Array) \
            else pikepdf.OutlineItem(str(item.title))
        new.is_closed = item.is_closed
        new.children.extend(copy(c) for c in item.children)
        return new

    with src.open_outline() as outline:
        return [copy(item) for item in outline.root]


def _destinations(src: pikepdf.Pdf, pdf: pikepdf.Pdf, offset: int) -> list[tuple[str | bytes, pikepdf.Array]]:
    """src's named destinations ([page /XYZ left top zoom]) pointing at its pages in pdf."""
    if "/Names" not in src.Root or "/Dests" not in src.Root.Names:
        return []
    where = _page_index(src)
    return [(name, pikepdf.Array([pdf.pages[offset + where[d[0].objgen]].obj, *d[1:]]))
            for name, d in pikepdf.NameTree(src.Root.Names.Dests).items()]


def _share_resources(pdf: pikepdf.Pdf) -> None:
    """Point every page at the first of identical fonts and colour spaces (same bytes, same entries):
    qpdf then writes one copy; the unreferenced rest is dropped on save."""
    first: dict[str, Any] = {}
    digests: dict[tuple[int, int], str] = {}   # a part's pages share one font dictionary: digest it once
    key: str | None
    for page in pdf.pages:
        res: pikepdf.Object | dict = page.obj.get("/Resources", {})
        for kind in ("/Font", "/ColorSpace"):
            entries = res.get(kind)
            if entries is None:
                continue
            for name in list(entries.keys()):
                obj = entries[name]
                if not obj.is_indirect:
                    key = _digest(obj)
                elif (key := digests.get(obj.objgen)) is None:
                    key = digests[obj.objgen] = _digest(obj)
                entries[name] = first.setdefault(key, obj)


def _digest(obj: Any) -> str:
    """sha256 over an object's content (stream bytes included), independent of object numbers."""
    h = hashlib.sha256()

    def feed(o):
        if isinstance(o, pikepdf.Stream):
            h.update(b"S" + o.read_raw_bytes())
            feed(o.stream_dict)
        elif isinstance(o, pikepdf.Dictionary):
            for k in sorted(o.keys()):
                h.update(b"K" + k.encode())
                feed(o[k])
        elif isinstance(o, pikepdf.Array):
            h.update(b"[")
            for x in o:
                feed(x)
            h.update(b"]")
        else:
            h.update(b"V" + (o.unparse() if isinstance(o, pikepdf.Object) else repr(o).encode()))
    feed(obj)
    return h.hexdigest()
