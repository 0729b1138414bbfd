"""Helpers the report tests share: run the CLI in-process, read a PDF's text, check a PDF's
structure, and drop what legitimately varies from page text before comparing it to a golden file."""
from __future__ import annotations

import logging
import re
from pathlib import Path

import pikepdf
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


def structure_problems(pdf: Path) -> list[str]:
    """What qpdf's `--check` reports (through pikepdf: cross-reference table, every stream decoded,
    every page's content parsed) and what pypdf warns while reading every object: [] for a sound file."""
    with pikepdf.open(pdf) as doc:
        problems = [f"qpdf: {p}" for p in doc.check_pdf_syntax()]
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    log = logging.getLogger("pypdf")
    log.addHandler(handler)
    try:
        reader = PdfReader(pdf)
        for number in range(1, int(reader.trailer["/Size"])):
            reader.get_object(number)
        for page in reader.pages:
            page.extract_text()
    finally:
        log.removeHandler(handler)
    return problems + [f"pypdf: {r.getMessage()}" for r in records]
