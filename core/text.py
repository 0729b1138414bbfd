"""Text from the data as a terminal or a chart may show it."""
from __future__ import annotations

import unicodedata

# Unicode categories that print as nothing or act on the display: control characters (terminal
# escapes, line breaks) and format characters (zero-width, bidi overrides, soft hyphen, BOM)
HIDDEN = ("Cc", "Cf")


def printable(text: str) -> str:
    """`text` with its control and format characters written out (ESC as \\x1b, a right-to-left
    override as \\u202e): a value from a file can neither drive the terminal nor reorder a line."""
    return "".join(_escaped(c) if unicodedata.category(c) in HIDDEN else c for c in text)


def _escaped(c: str) -> str:
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
