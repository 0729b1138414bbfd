"""Helpers the report tests share: run the CLI in-process, read a PDF's text, and drop what
legitimately varies from page text before comparing it to a golden file."""
from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from pypdf import PdfReader

from pipelines.cli import main


def stable(page: str) -> str:
    """Page text without the hashes (inputs, reference data) and the page count (the
    methodology appendix grows with the reference files)."""
    page = re.sub(r"warehouse \w+ · assumptions \w+", "warehouse … · assumptions …", page)
    page = re.sub(r"config [0-9a-f]{16}", "config …", page)
    return re.sub(r"page \d+ of \d+", "page … of …", page)


def cli(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output + repr(res.exception)
    return res.output


def text(pdf: Path) -> str:
    return "\n".join(p.extract_text() for p in PdfReader(pdf).pages)
