"""What a signed report must state so it can be re-derived: which inputs, which assumptions, which code.

- warehouse hash: sha256 over the sorted sha256 of the loaded source files the report rests on
  (a month's report: that month's files and the published disclosures, which no month dates;
  the same for the chargeback and the audit) plus the assumptions version, so two warehouses built
  from the same files and reference data print the same hash whatever order or day they were
  loaded in, or whatever other months sit beside them;
- assumptions version: sha256 over sources/reference/*.csv (file name and bytes, sorted by name);
- the meterbook version;
- the config: sha256 of the meterbook.toml the figures were allocated with, or none (the
  defaults): the same warehouse under another config gives other teams' figures.
Printed as short prefixes (16 hex digits) in the footer; full values go into the attached JSON.
"""
from __future__ import annotations

import hashlib
from datetime import date
from importlib.metadata import version
from pathlib import Path
from typing import Any

import duckdb

from pipelines.config import Config
from pipelines.quality import quality_summary
from sources.reference_data import REFERENCE_DIR

SHORT = 16   # hex digits in the footer: 64 bits, enough to tell builds apart by eye


def assumptions_version() -> str:
    h = hashlib.sha256()
    for p in sorted(REFERENCE_DIR.glob("*.csv")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def methodology_file_name(version: str | None = None) -> str:
    """The methodology document of a reference-data version (reports/methodology_doc.py)."""
    return f"methodology-{(version or assumptions_version())[:SHORT]}.pdf"


def source_hashes(con: duckdb.DuckDBPyConnection, month: str | None = None, also_kinds: tuple[str, ...] = ()) -> list[str]:
    """The loaded files' sha256: all of them, or those a month's report rests on (its
    quality_summary scope), so October's hash does not move when September is loaded."""
    return sorted({f["sha256"] for f in quality_summary(con, month, also_kinds)["file_list"] if f["status"] == "loaded"})


def warehouse_hash(con: duckdb.DuckDBPyConnection, assumptions: str | None = None, month: str | None = None,
                   also_kinds: tuple[str, ...] = ()) -> str:
    h = hashlib.sha256()
    for s in source_hashes(con, month, also_kinds):
        h.update(s.encode() + b"\n")
    h.update(b"reference:" + (assumptions or assumptions_version()).encode())
    return h.hexdigest()


# Inputs no month dates (published disclosures): part of every month's warehouse hash, so the
# chargeback and the audit of one warehouse state print one hash in their footers.
UNDATED_KINDS = ("disclosure", "hf-model-card")


def provenance(con: duckdb.DuckDBPyConnection, month: str | None = None, also_kinds: tuple[str, ...] = (),
               config: Config | None = None) -> dict[str, Any]:
    """The footer's and the attached JSON's provenance. The warehouse hash is defined once, over
    the month's files and the undated ones (UNDATED_KINDS), whatever report asks; `also_kinds`
    is kept for callers and adds to that scope."""
    av = assumptions_version()
    wh = warehouse_hash(con, av, month, tuple(dict.fromkeys(UNDATED_KINDS + also_kinds)))
    cfg = config.sha256 if config else None
    return {"warehouse_hash": wh, "assumptions_version": av, "meterbook_version": version("meterbook"),
            "warehouse_short": wh[:SHORT], "assumptions_short": av[:SHORT],
            # by file name, like every input a provenance lists: the JSON travels with the PDF
            "config_sha256": cfg, "config_path": Path(config.path).name if config and config.path else None,
            "config_short": cfg[:SHORT] if cfg else "defaults"}


def document_date(month: str | None) -> str:
    """The PDF's creation date: the first day after the reported month (a date the data fixes,
    never the wall clock, so re-rendering the same inputs gives the same bytes)."""
    if not month:
        return "2000-01-01T00:00:00Z"   # an audit of disclosures alone has no period
    y, m = map(int, month.split("-"))
    d = date(y + m // 12, m % 12 + 1, 1)
    return f"{d.isoformat()}T00:00:00Z"
