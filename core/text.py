"""Text from the data as a terminal or a chart may show it."""
from __future__ import annotations

import unicodedata
from typing import Any, Mapping

# Unicode categories that print as nothing or act on the display: control characters (terminal
# escapes, line breaks) and format characters (zero-width, bidi overrides, soft hyphen, BOM)
HIDDEN = ("Cc", "Cf")


def printable(text: str) -> str:
    """`text` with its control and format characters written out (ESC as \\x1b, a right-to-left
    override as \\u202e): a value from a file can neither drive the terminal nor reorder a line."""
    return "".join(_escaped(c) if unicodedata.category(c) in HIDDEN else c for c in text)


def _escaped(c: str) -> str:
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def team_name(raw: str | None) -> str | None:
    """The team a tag value or a typed name stands for: hidden characters removed, compatibility
    forms folded (Unicode NFKC: fullwidth `ｒｅｓｅａｒｃｈ`, the ligature in `ﬁnance`, a
    superscript digit) and surrounding spaces trimmed; None when nothing is left. Spellings that
    print alike must be one team, never two rows and two statements. The SQL macro team_name does
    the first and last steps (DuckDB and Spark have no NFKC), and int_name_folds carries this
    function's answer for every value outside ASCII, where NFKC can change anything."""
    if raw is None:
        return None
    visible = unicodedata.normalize("NFKC", _without_hidden(raw))
    return _without_hidden(visible).strip(" ") or None   # NFKC of a visible letter never yields Cf; cheap to be sure


def _without_hidden(text: str) -> str:
    return "".join(c for c in text if unicodedata.category(c) not in HIDDEN)


def run_name(r: Mapping[str, Any]) -> str:
    """The name a CodeCarbon run goes by (its project and the start of its id, else its row): the
    audit's reconstruction of it and the report's table both print it."""
    return f"{r['project'] or 'run'} {(r['run_id'] or str(r['row_number']))[:8]}"
