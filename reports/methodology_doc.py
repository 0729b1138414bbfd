"""The methodology document: the reference data's methodology and coefficient tables, rendered once
per reference-data version into `methodology-<hash>.pdf`, where <hash> is the first 16 hex digits
of the assumptions version (reports/provenance.py). Monthly reports name that file and the full
hash instead of repeating pages that do not change from month to month.
"""
from __future__ import annotations

from pathlib import Path

import duckdb

from reports.methodology import methodology_context
from reports.methodology_method import method_context
from reports.provenance import SHORT, assumptions_version, document_date, methodology_file_name
from reports.render import render_pdf


def write_methodology(out: Path, con: duckdb.DuckDBPyConnection | None = None) -> Path:
    """Render the methodology document into `out` (a folder); the same reference data gives the
    same file name and bytes."""
    version = assumptions_version()
    path = out / methodology_file_name(version)
    ctx = {"created": document_date(None), "version": version, "version_short": version[:SHORT],
           "methodology": methodology_context(con), "method": method_context()}
    return render_pdf("methodology.html", ctx, path)
