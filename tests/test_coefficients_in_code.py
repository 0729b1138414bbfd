"""Every coefficient lives in sources/reference, never as a literal in code: a test fails when
code cites an assumption or limit id the data files lack, or grows a coefficient-like literal."""
from __future__ import annotations

import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("core", "pipelines", "sources", "reports", "schemas")
# Files whose numbers are not coefficients: named unit definitions, and the demo generator's
# made-up platform (its inputs are demo data, not estimates).
EXEMPT_FILES = {"core/units.py", "pipelines/demo.py"}
# The before-stop check's pattern for coefficient-like literals (0.123, 400.5, ...).
LITERAL = re.compile(r"\b(0\.[0-9]{3,}|[1-9][0-9]{2,}\.[0-9]+)\b")
IDS = [
    re.compile(r"assumption_id\s*=\s*'([a-z0-9_]+)'"),                 # SQL over ref_assumptions
    re.compile(r"assumption\w*\(\s*[\"']([a-z0-9_]+)[\"']"),         # Python lookups
    re.compile(r"[\"']assumptions:([a-z0-9_]+)[\"']"),                # coefficient ids
    re.compile(r"limit_id\s*=\s*'([a-z0-9_]+)'"),
]


def code_files():
    for d in CODE_DIRS:
        for p in sorted((ROOT / d).rglob("*")):
            if p.suffix in (".py", ".sql") and str(p.relative_to(ROOT)) not in EXEMPT_FILES:
                yield p


def code_lines(p: Path):
    """Lines that are code, not comments (docstrings may quote figures; they are prose)."""
    in_doc = False
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        s = line.strip()
        if p.suffix == ".py" and s.count('"""') % 2 == 1:
            in_doc = not in_doc
            continue
        if in_doc or s.startswith(("#", "--")) or (p.suffix == ".py" and s.startswith('"""')):
            continue
        yield n, line.split(" -- ")[0] if p.suffix == ".sql" else line.split("  # ")[0]


def ids_in(name: str, key: str) -> set[str]:
    with open(ROOT / "sources" / "reference" / f"{name}.csv", newline="", encoding="utf-8") as fh:
        return {r[key] for r in csv.DictReader(fh)}


def test_no_coefficient_literals_in_code():
    found = [f"{p.relative_to(ROOT)}:{n}: {m.group(0)}" for p in code_files() for n, line in code_lines(p)
             for m in LITERAL.finditer(line)]
    assert not found, "move these to sources/reference with a source and range:\n" + "\n".join(found)


def test_every_cited_assumption_and_limit_exists():
    known = ids_in("assumptions", "assumption_id") | ids_in("check_limits", "limit_id")
    cited = {(m.group(1), f"{p.relative_to(ROOT)}:{n}") for p in code_files() for n, line in code_lines(p)
             for rx in IDS for m in rx.finditer(line)}
    missing = sorted(f"{where}: {i}" for i, where in cited if i not in known)
    assert cited, "the scan found no citations at all; the patterns are stale"
    assert not missing, "cited but not in sources/reference:\n" + "\n".join(missing)


def test_every_exempt_file_exists():
    """An exemption for a file that is gone would silently cover whatever later takes its name."""
    assert all((ROOT / f).is_file() for f in EXEMPT_FILES), [f for f in EXEMPT_FILES if not (ROOT / f).is_file()]
