"""PDF/A-3b checks that need no Java: the object-level rules of veraPDF's PDFA-3B validation
profile (ISO 19005-3 clause and test number in each message) that pypdf can see.

Not a substitute for veraPDF (no content-stream, glyph or colour-space analysis), but it catches
what a writer or a post-processing step (our pypdf merge of report parts) typically breaks:
identification, metadata, output intent, trailer, fonts, attachments, actions.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, StreamObject, TextStringObject

ALLOWED_FILTERS = {"/ASCIIHexDecode", "/ASCII85Decode", "/FlateDecode", "/RunLengthDecode", "/CCITTFaxDecode",
                   "/JBIG2Decode", "/DCTDecode", "/JPXDecode"}
ALLOWED_ACTIONS = {"/GoTo", "/GoToR", "/GoToE", "/Thread", "/URI", "/Named", "/SubmitForm"}
ALLOWED_ANNOTS = {"/Text", "/Link", "/FreeText", "/Line", "/Square", "/Circle", "/Polygon", "/PolyLine", "/Highlight",
                  "/Underline", "/Squiggly", "/StrikeOut", "/Stamp", "/Caret", "/Ink", "/Popup", "/FileAttachment",
                  "/Widget", "/PrinterMark", "/TrapNet", "/Watermark", "/Redact"}
NS = {"rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "pdfaid": "http://www.aiim.org/pdfa/ns/id/",
      "pdf": "http://ns.adobe.com/pdf/1.3/", "xmp": "http://ns.adobe.com/xap/1.0/", "dc": "http://purl.org/dc/elements/1.1/"}


def violations(path: Path) -> list[str]:
    """Every rule the file breaks, as '<clause>-<test>: <what>'; empty when none."""
    raw = path.read_bytes()
    out = _file_structure(raw)
    reader = PdfReader(path)
    out += _trailer(reader)
    if reader.is_encrypted:
        return sorted(set(out))     # nothing else can be read without the password
    root = reader.trailer["/Root"]
    out += _catalog(root)
    xmp = _metadata(root, out)
    if xmp is not None:
        out += _identification(xmp) + _info_matches_xmp(reader, xmp)
    out += _output_intents(root)
    seen: set[int] = set()
    for obj in _objects(root, seen):
        out += _object_rules(obj)
    for page in reader.pages:
        out += _fonts(page)
        if "/AA" in page:
            out.append("6.5.2-2: a page has an additional-actions (AA) entry")
    return sorted(set(out))


def _file_structure(raw: bytes) -> list[str]:
    out = []
    first = raw.split(b"\n", 1)[0].rstrip(b"\r")
    if not re.fullmatch(rb"%PDF-1\.[0-7]", first):
        out.append(f"6.1.2-1: header is {first[:12]!r}, not %PDF-1.n at byte 0")
    second = raw.split(b"\n", 2)[1] if raw.count(b"\n") > 1 else b""
    if not (second.startswith(b"%") and len(second) >= 5 and all(b > 127 for b in second[1:5])):
        out.append("6.1.2-2: no binary comment (4 bytes > 127) after the header")
    tail = raw[raw.rfind(b"%%EOF") + 5:]
    if tail not in (b"", b"\n", b"\r\n", b"\r"):
        out.append(f"6.1.3-3: {len(tail)} bytes after the last %%EOF")
    return out


def _trailer(reader: PdfReader) -> list[str]:
    out = []
    ids = reader.trailer.get("/ID")
    if not ids or len(ids) != 2 or not all(len(bytes(i.original_bytes if hasattr(i, "original_bytes") else i)) for i in ids):
        out.append("6.1.3-1: trailer has no file identifier (ID)")
    if "/Encrypt" in reader.trailer:
        out.append("6.1.3-2: trailer has Encrypt")
    return out


def _catalog(root: DictionaryObject) -> list[str]:
    out = []
    if "/AA" in root:
        out.append("6.5.2-1: catalog has an additional-actions (AA) entry")
    if "/Requirements" in root:
        out.append("6.11-1: catalog has Requirements")
    if root.get("/NeedsRendering"):
        out.append("6.4.2-2: catalog has NeedsRendering")
    if "/AlternatePresentations" in root.get("/Names", {}):
        out.append("6.10-1: name dictionary has AlternatePresentations")
    if "/XFA" in root.get("/AcroForm", {}):
        out.append("6.4.2-1: AcroForm has XFA")
    return out


def _metadata(root: DictionaryObject, out: list[str]) -> ET.Element | None:
    meta = root.get("/Metadata")
    if meta is None:
        out.append("6.6.2.1-1: catalog has no Metadata stream")
        return None
    meta = meta.get_object()
    if meta.get("/Type") != "/Metadata" or meta.get("/Subtype") != "/XML":
        out.append("6.6.2.1-1: metadata stream is not Type Metadata, Subtype XML")
    data = meta.get_data().decode("utf-8")
    header = re.search(r"<\?xpacket begin=[^>]*\?>", data)
    if header and re.search(r"\b(bytes|encoding)=", header.group(0)):
        out.append("6.6.2.1-2/3: XMP packet header has a bytes or encoding attribute")
    try:
        return ET.fromstring(re.sub(r"<\?xpacket[^>]*\?>", "", data).strip())
    except ET.ParseError as exc:
        out.append(f"6.6.2.1-4: XMP is not well-formed XML ({exc})")
        return None


def _xmp_values(xmp: ET.Element, prefix: str, name: str) -> list[str]:
    """A property written either as an attribute of rdf:Description or as a child element."""
    tag = f"{{{NS[prefix]}}}{name}"
    vals = []
    for desc in xmp.iter(f"{{{NS['rdf']}}}Description"):
        if tag in desc.attrib:
            vals.append(desc.attrib[tag])
        for el in desc.iter(tag):
            vals.append("".join(el.itertext()).strip())
    return vals


def _identification(xmp: ET.Element) -> list[str]:
    part, conf = _xmp_values(xmp, "pdfaid", "part"), _xmp_values(xmp, "pdfaid", "conformance")
    out = []
    if len(part) != 1 or len(conf) != 1:
        out.append("6.6.4-1: XMP does not hold exactly one PDF/A identification (pdfaid:part, pdfaid:conformance)")
    elif part != ["3"]:
        out.append(f"6.6.4-2: pdfaid:part is {part[0]}, not 3")
    elif conf[0] not in ("A", "B", "U"):
        out.append(f"6.6.4-3: pdfaid:conformance is {conf[0]}")
    return out


def _pdf_date_as_xmp(d: str) -> str:
    """D:20261101000000Z -> 2026-11-01T00:00:00Z (the forms WeasyPrint writes)."""
    m = re.fullmatch(r"D:(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(Z|[+-]\d\d'?\d\d'?)?", d)
    if not m:
        return d
    zone = (m.group(7) or "").replace("'", "")
    if zone and zone != "Z":
        zone = zone[:3] + ":" + zone[3:]
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}T{m.group(4)}:{m.group(5)}:{m.group(6)}{zone}"


def _info_matches_xmp(reader: PdfReader, xmp: ET.Element) -> list[str]:
    """ISO 19005-3 6.6.3: each document information entry has an equivalent XMP property."""
    info = reader.trailer.get("/Info")
    if info is None:
        return []
    info = info.get_object()
    pairs = {"/Title": ("dc", "title"), "/Creator": ("xmp", "CreatorTool"), "/Producer": ("pdf", "Producer"),
             "/CreationDate": ("xmp", "CreateDate"), "/ModDate": ("xmp", "ModifyDate")}
    out = []
    for key, (prefix, name) in pairs.items():
        if key not in info:
            continue
        want = str(info[key])
        want = _pdf_date_as_xmp(want) if key.endswith("Date") else want
        got = _xmp_values(xmp, prefix, name)
        if want not in got:
            out.append(f"6.6.3-1: Info {key} {want!r} has no equal XMP {prefix}:{name} (found {got})")
    return out


def _output_intents(root: DictionaryObject) -> list[str]:
    intents = [i.get_object() for i in root.get("/OutputIntents", [])]
    pdfa = [i for i in intents if i.get("/S") == "/GTS_PDFA1"]
    if not pdfa:
        return ["6.2.2-1: no GTS_PDFA1 output intent"]
    profiles = {id(i["/DestOutputProfile"].get_object()) if "/DestOutputProfile" in i else None for i in pdfa}
    out = []
    if None in profiles:
        out.append("6.2.3-2: the PDF/A output intent has no DestOutputProfile")
    refs = {i.raw_get("/DestOutputProfile").idnum for i in pdfa if isinstance(i.raw_get("/DestOutputProfile"), IndirectObject)}
    if len(refs) > 1:
        out.append("6.2.3-1: output intents name different ICC profiles")
    return out


def _objects(obj, seen: set[int]):
    """Every dictionary and stream reachable from `obj`, each once."""
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, IndirectObject):
            if o.idnum in seen:
                continue
            seen.add(o.idnum)
            o = o.get_object()
        if isinstance(o, DictionaryObject):
            yield o
            # /Parent points back up the page tree: following it only revisits
            stack.extend(v for k, v in o.items() if k != "/Parent")
        elif isinstance(o, ArrayObject):
            stack.extend(o)


def _object_rules(o: DictionaryObject) -> list[str]:
    out = []
    if isinstance(o, StreamObject):
        if any(k in o for k in ("/F", "/FFilter", "/FDecodeParms")) and o.get("/Type") != "/EmbeddedFile":
            out.append("6.1.7-3: a stream dictionary has F, FFilter or FDecodeParms")
        filters = o.get("/Filter")
        for f in (filters if isinstance(filters, ArrayObject) else [filters] if filters else []):
            if f not in ALLOWED_FILTERS:
                out.append(f"6.1.7-4: stream filter {f} is not allowed")
        if o.get("/Type") == "/EmbeddedFile" and "/Subtype" not in o:
            out.append("6.8-1: an embedded file has no MIME type (Subtype)")
    for k, v in o.items():
        if len(k.encode()) > 128:      # the name includes its leading slash
            out.append(f"6.1.13-4: name longer than 127 bytes: {k[:40]}…")
        if isinstance(v, TextStringObject) and len(v.encode("utf-8", "replace")) >= 32767:
            out.append(f"6.1.13-3: string longer than 32767 bytes under {k}")
    if o.get("/Type") == "/Filespec" and "/EF" in o:
        if "/F" not in o or "/UF" not in o:
            out.append(f"6.8-2: embedded file spec {o.get('/F')} lacks F or UF")
        if "/AFRelationship" not in o:
            out.append(f"6.8-3: embedded file spec {o.get('/F')} has no AFRelationship")
    if o.get("/Type") == "/Annot" or o.get("/Subtype") in ALLOWED_ANNOTS and "/Rect" in o:
        sub = o.get("/Subtype")
        if sub not in ALLOWED_ANNOTS:
            out.append(f"6.3.1-1: annotation type {sub} is not allowed")
        flags = o.get("/F")
        if sub != "/Popup" and flags is None:
            out.append(f"6.3.2-1: a {sub} annotation has no F key")
        elif flags is not None and not (flags & 4 and not flags & (1 | 2 | 32 | 256)):
            out.append(f"6.3.2-2: a {sub} annotation is hidden or not printed (F={flags})")
    for key in ("/A", "/OpenAction"):
        action = o.get(key)
        action = action.get_object() if action is not None else None
        if isinstance(action, DictionaryObject) and action.get("/S") not in ALLOWED_ACTIONS:
            out.append(f"6.5.1-1: action {action.get('/S')} is not allowed")
    if "/JS" in o or "/JavaScript" in o:
        out.append("6.5.1-1: JavaScript present")
    return out


def _fonts(page) -> list[str]:
    out = []
    fonts = page.get("/Resources", {}).get("/Font", {})
    for font in fonts.values():
        font = font.get_object()
        desc = (font["/DescendantFonts"][0].get_object() if "/DescendantFonts" in font else font).get("/FontDescriptor")
        if desc is None or not any(k in desc for k in ("/FontFile", "/FontFile2", "/FontFile3")):
            out.append(f"6.2.11.4.1-1: font {font.get('/BaseFont')} is not embedded")
    return out
