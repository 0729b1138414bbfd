"""The fonts every report embeds: DejaVu Sans and DejaVu Sans Mono, cut once to the characters
below and shipped in templates/fonts/ (licence beside them), embedded whole.

Why a shipped cut, embedded whole: left to itself WeasyPrint subsets the system's DejaVu for every
PDF, with HarfBuzz when libharfbuzz-subset is installed and with fontTools otherwise. The two
write different font bytes, fontTools stamps each subset with the wall clock (`head.modified`), and
fontTools costs about a second per PDF. A cut made once and embedded as it is (WeasyPrint's
`full_fonts`) touches no subsetter: the same bytes on any machine, no per-PDF font work. Its cost
is size: about 30 KB (deflated) per face a PDF uses, where a per-PDF subset is about 5 KB.

Text the cut lacks (a team tag in Cyrillic or Han script) still renders: the CSS lists the system
DejaVu and `sans-serif` after the shipped family. A document that drew with such a fallback font
is written again with per-PDF subsetting, since a fallback font embedded whole can weigh
megabytes. Its subsets are dated like the document (SOURCE_DATE_EPOCH, which fontTools honours),
so it gives the same bytes run to run on that machine; another machine's fallback fonts may
differ, and so may its bytes.

Regenerate the cut (fontTools, DejaVu 2.37 as Debian's fonts-dejavu-core ships it):
    python -m reports.fonts /usr/share/fonts/truetype/dejavu
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Iterator

FONT_DIR = files("templates") / "fonts"
SANS, MONO = "Meterbook Sans", "Meterbook Mono"
# shipped file: (CSS family, weight, style, DejaVu source file)
FACES = {
    "MeterbookSans.ttf": (SANS, "normal", "normal", "DejaVuSans.ttf"),
    "MeterbookSans-Bold.ttf": (SANS, "bold", "normal", "DejaVuSans-Bold.ttf"),
    "MeterbookSans-Oblique.ttf": (SANS, "normal", "italic", "DejaVuSans-Oblique.ttf"),
    "MeterbookSans-BoldOblique.ttf": (SANS, "bold", "italic", "DejaVuSans-BoldOblique.ttf"),
    "MeterbookMono.ttf": (MONO, "normal", "normal", "DejaVuSansMono.ttf"),
    "MeterbookMono-Bold.ttf": (MONO, "bold", "normal", "DejaVuSansMono-Bold.ttf"),
}
# What reports print (figures, units, dashes, −, ×, ≤, ≥, …, CO₂) and what names in European
# languages need. Each range adds 2-13 KB per face per PDF, hence no whole blocks of symbols.
CHARACTERS = (
    (0x0020, 0x007E),   # Basic Latin
    (0x00A0, 0x017F),   # Latin-1 Supplement, Latin Extended-A
    (0x0218, 0x021B),   # Romanian comma-below letters
    (0x0391, 0x03C9),   # Greek letters (Δ, μ, σ in formulas and units)
    (0x2010, 0x2027),   # dashes, quotes, bullet, ellipsis (and WeasyPrint's hyphen, U+2010)
    (0x2030, 0x203A),   # per mille, primes, single guillemets
    (0x2070, 0x209C),   # superscripts and subscripts: m², CO₂
    (0x20A0, 0x20C0),   # currency signs
    (0x2103, 0x2103), (0x2116, 0x2116), (0x2122, 0x2122),   # ℃ № ™
    (0x2190, 0x2199),   # arrows
    (0x2206, 0x2206), (0x2211, 0x2213), (0x2215, 0x2215), (0x2219, 0x221A), (0x221D, 0x221E),
    (0x2248, 0x2248), (0x2260, 0x2261), (0x2264, 0x2265),   # ∆ ∑ − ∓ ∕ ∙ √ ∝ ∞ ≈ ≠ ≡ ≤ ≥
    (0x25A0, 0x25A1), (0x25AA, 0x25AB), (0x25B2, 0x25B3), (0x25B6, 0x25B6), (0x25BC, 0x25BD),
    (0x25C0, 0x25C0), (0x25C6, 0x25C6), (0x25CB, 0x25CB), (0x25CF, 0x25CF),
    (0x25E6, 0x25E6),   # shapes, among them the list bullets ◦ and ▪
    (0x2713, 0x2713), (0x2717, 0x2717),   # ✓ ✗
    (0xFFFD, 0xFFFD),   # replacement character
)


def shipped_only(document) -> bool:
    """Whether a written WeasyPrint document drew its text with the shipped faces alone, no
    fallback font (its `fonts` fill as it is written)."""
    return all(f.family in (SANS, MONO) for f in document.fonts.values())


@contextmanager
def dated_subsets(created: str) -> Iterator[None]:
    """fontTools dates a subset font with the wall clock unless SOURCE_DATE_EPOCH is set: pin it
    to the document's date while WeasyPrint writes, so a fallback subset gives the same bytes."""
    when = str(int(datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()))
    before = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = when
    try:
        yield
    finally:
        if before is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = before


def cut(source_dir: Path, out_dir: Path = Path(str(FONT_DIR))) -> list[Path]:
    """Write the shipped faces from DejaVu's: CHARACTERS only, no hinting (WeasyPrint drops it from
    its subsets too), renamed so no system DejaVu is mistaken for it. Positioning (kerning, marks)
    stays; substitution (GSUB: ligatures) goes, so every glyph drawn is one the character map
    names: a font embedded whole gets its text map (ToUnicode) from that map alone, and a ligature
    would copy and search as a stray letter ("ﬀ" for "ff")."""
    from fontTools import subset
    from fontTools.ttLib import TTFont
    unicodes = [u for lo, hi in CHARACTERS for u in range(lo, hi + 1)]
    written = []
    for name, (family, _weight, _style, source) in FACES.items():
        options = subset.Options(hinting=False, desubroutinize=True, notdef_outline=True, glyph_names=False,
                                 name_IDs=["*"], name_languages=["*"], layout_features=["*"])
        options.drop_tables += ["MATH", "FFTM", "GSUB"]
        font = TTFont(str(source_dir / source), recalcTimestamp=False)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=unicodes)
        subsetter.subset(font)
        _rename(font, family, source)
        font.save(str(out_dir / name))
        written.append(out_dir / name)
    # DejaVu Sans carries the whole licence (Bitstream Vera and Arev) in its name table; it must
    # travel with every copy of the fonts
    licence = TTFont(str(source_dir / FACES["MeterbookSans.ttf"][3]), lazy=True)["name"].getDebugName(13)
    (out_dir / "LICENSE").write_text(licence.rstrip() + "\n", encoding="utf-8")
    return written + [out_dir / "LICENSE"]


def _rename(font, family: str, source: str) -> None:
    """Family, full and PostScript names of the cut; copyright and licence records stay."""
    names = font["name"]
    sub = names.getDebugName(2) or "Book"
    version = names.getDebugName(5) or ""
    for rec in list(names.names):
        if rec.nameID in (1, 3, 4, 6, 16, 17):
            names.removeNames(nameID=rec.nameID)
    full = family if sub == "Book" else f"{family} {sub}"
    postscript = family.replace(" ", "") + ("" if sub == "Book" else "-" + sub.replace(" ", ""))
    for name_id, value in ((1, family), (3, f"{full}; {source} {version} cut for meterbook"), (4, full),
                           (6, postscript)):
        names.setName(value, name_id, 3, 1, 0x409)
        names.setName(value, name_id, 1, 0, 0)


if __name__ == "__main__":
    for p in cut(Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/fonts/truetype/dejavu")):
        print(f"wrote {p} ({p.stat().st_size:,} bytes)")
