"""Rendering helpers: jinja2 environment with escaping, number formats, SVG charts, PDF."""
from __future__ import annotations

import csv
import io
import math
from datetime import datetime
from decimal import Decimal
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path
from typing import Any, Iterable

import jinja2

from core.atomic import replace_file
from core.csv_amounts import money_text
from core.csv_out import safe_cell, write_text
from core.figures import settled
from reports import fonts
from reports.charts import bar_chart_svg  # noqa: F401  (re-exported: older callers import it here)
from reports.labels import action, label, plain

TEMPLATES = files("templates")
PDF_VARIANT = "pdf/a-3b"  # archival PDF that may carry embedded files (the CSV and assumptions)
CSV_FLOAT_DIGITS = 12


def shown_amount(x: Any, places: int = 2) -> Decimal:
    """An amount as `money` prints it: exact decimals (floats settled first) rounded to `places`."""
    exact = x if isinstance(x, (Decimal, int)) else Decimal(repr(settled(float(x))))
    q = Decimal(exact).quantize(Decimal(1).scaleb(-places))
    return q.copy_abs() if q.is_zero() else q    # less than half a cent owed either way prints 0.00


def money(x: Any, places: int = 2) -> str:
    if x is None:
        return "–"
    return f"{shown_amount(x, places):,.{places}f}".replace("-", "−")


def rounding_line(rows: list[dict[str, Any]], keys: tuple[str, ...], places: int = 2) -> dict[str, Decimal] | None:
    """What the printed total differs by from the sum of the printed rows (each rounded alone),
    per key; None when the printed rows add up to the printed totals."""
    diff = {k: shown_amount(sum((r[k] or 0) for r in rows), places) - sum(shown_amount(r[k] or 0, places) for r in rows)
            for k in keys}
    return diff if any(diff.values()) else None


def number(x: Any, places: int = 0) -> str:
    if x is None:
        return "–"
    # + 0.0: a crumb below the last place shown prints 0, not -0
    return f"{round(settled(float(x)), places) + 0.0:,.{places}f}".replace("-", "−")


def sig(x: Any, digits: int = 3) -> str:
    """Three significant figures: audit meters span 0.48 (MFU) to 3.3e20 (FLOP) in one column."""
    if x is None:
        return "–"
    x = settled(float(x))
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    a = abs(x)
    if a >= 1e9 or a < 1e-3:
        return f"{x:.{digits - 1}e}".replace("-", "−")
    places = max(0, digits - 1 - math.floor(math.log10(a)))
    return f"{x:,.{places}f}".replace("-", "−")


def figure(x: Any) -> str:
    """A published figure exactly as the data holds it (a coefficient, a limit): every digit it has,
    thousands separators, and powers of ten where a reader expects them (1.1 × 10^9, not
    1100000000 or 1.1e+09). Computed figures go through `sig` or `number` instead."""
    if x is None or x == "":
        return "–"
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if abs(x) >= SCIENTIFIC_ABOVE or abs(x) < SCIENTIFIC_BELOW:
        mantissa, exponent = f"{x:e}".split("e")
        return f"{Decimal(mantissa).normalize():f} × 10^{int(exponent)}".replace("-", "−")
    d = Decimal(repr(x))
    d = d.quantize(Decimal(1)) if d == d.to_integral_value() else d.normalize()
    return f"{d:,f}".replace("-", "−")


# Where `figure` and `sig` switch to powers of ten
SCIENTIFIC_ABOVE, SCIENTIFIC_BELOW = 1e9, 1e-3


def short_path(p: Any) -> str:
    """A path relative to the working folder when it lies below it (lineage keeps the full path)."""
    try:
        return str(Path(p).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def file_name(p: Any) -> str:
    """A file's name without its folders: reports name inputs by name and sha256, never by path."""
    return Path(str(p)).name


def month_name(month: str) -> str:
    """'2026-10' -> 'October 2026' (the title of a monthly document)."""
    return datetime.strptime(month, "%Y-%m").strftime("%B %Y")


def signed(x: Any, places: int = 1) -> str:
    """A change with its sign (+1.5, -0.2); a rounding crumb prints +0.0, not -0.0."""
    return f"{round(settled(float(x)), places) + 0.0:+,.{places}f}"


def pct(x: Any, places: int = 0) -> str:
    return "–" if x is None else f"{round(settled(float(x) * 100), places) + 0.0:.{places}f} %"


# What every range in every document and export means: one sentence, printed on page 1 of the
# chargeback and of the audit (docs/figures.md says why interval bounds).
RANGE_MEANING = ("Every range is an interval bound: the figure with each assumption (TDP, power fraction, PUE, grid "
                 "intensity, embodied and lifetime figures) at the end of its stated range that lowers it, then at the "
                 "end that raises it; it holds whenever each assumption lies in its stated range, and a total's range "
                 "is the sum of its rows', so a figure has the same range on every page and in every export.")

# The rule the GHG scope split follows (the build's scope_month mart applies it), printed on
# page 1 of the audit and beside every disclosure's CO2e.
SCOPE_RULE = ("Scopes follow who owns the GPUs: electricity of owned or controlled equipment (on-premises, colocation) "
              "is Scope 2, reported location- and market-based; rented cloud instances are a purchased service, so "
              "their electricity and embodied emissions are both the customer's Scope 3, category 1 (purchased goods "
              "and services). The embodied emissions of owned GPUs are shown amortised over the hardware life by "
              "GPU-hour: an allocation of their making to their use (SCI's M), reported beside the inventory and in no "
              "scope. It is not Scope 3, category 2 (capital goods), which counts the whole cradle-to-gate emissions "
              "of hardware in the year it is acquired, never amortised; that needs the acquisitions (what was bought, "
              "when), which the inputs do not hold, so category 2 is not computed (GHG Protocol Scope 2 Guidance, "
              "2015, chapter 5; Corporate Value Chain (Scope 3) Standard, 2011, chapter 5).")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(money=money, number=number, figure=figure, pct=pct, signed=signed, short_path=short_path, sig=sig, label=label, action=action, plain=plain,
                       month_name=month_name, file_name=file_name)
    env.globals["meterbook_version"] = version("meterbook")
    env.globals["range_meaning"] = RANGE_MEANING
    env.globals["scope_rule"] = SCOPE_RULE
    return env


def render_pdf(template: str, context: dict[str, Any], out: Path,
               attachments: dict[str, tuple[str, str]] | None = None) -> Path:
    """Render to PDF/A-3b with `attachments` ({file name: (text, description)}) embedded as data.

    PDF/A-3 is the archival profile that allows embedded files: the CSV behind the tables and the
    assumptions travel inside the signed document. The creation date comes from the template's
    dcterms.created meta (a date the data fixes), so the same inputs give the same bytes.
    """
    from weasyprint import HTML
    html = environment().get_template(template).render(**context)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_pdf(HTML(string=html, base_url=str(TEMPLATES)).render(), out, context["created"], attachments)
    return out


def write_pdf(document, out: Path, created: str, attachments: dict[str, tuple[str, str]] | None = None) -> Path:
    """Write a laid-out WeasyPrint document as PDF/A-3b, `attachments` embedded, with the shipped
    fonts whole: no per-PDF font work, the same bytes on any machine. A document whose text needed
    a fallback font is written again with per-PDF subsets dated `created` (reports/fonts.py)."""
    def write(tmp: Path) -> None:
        document.write_pdf(tmp, pdf_variant=PDF_VARIANT, full_fonts=True,
                           attachments=attachment_files(attachments or {}, created))
        if not fonts.shipped_only(document):
            with fonts.dated_subsets(created):
                # a fresh copy: a written document keeps its fonts' state; attachments are read once
                document.copy().write_pdf(tmp, pdf_variant=PDF_VARIANT, attachments=attachment_files(attachments or {}, created))
    return replace_file(out, write)


def attachment_files(attachments: dict[str, tuple[str, str]], created: str) -> list:
    """WeasyPrint attachments dated like the document (WeasyPrint would stamp the wall clock)."""
    from weasyprint import Attachment
    when = datetime.fromisoformat(created.replace("Z", "+00:00"))
    return [Attachment(string=text, name=name, description=desc, relationship="Data", created=when, modified=when)
            for name, (text, desc) in attachments.items()]


def csv_cell(v: Any) -> Any:
    if isinstance(v, list):
        # a joined list is text like any other: neutralise it too (lists may hold user text)
        return safe_cell(";".join(map(str, v)))
    if isinstance(v, float):
        # DuckDB sums floats in parallel, so the last bits vary run to run; 12 significant digits
        # (far below any displayed precision) keep the CSV, and the PDF that embeds it, identical
        # for identical inputs.
        return float(f"{v:.{CSV_FLOAT_DIGITS}g}")
    return safe_cell(v)


def csv_text(rows: Iterable[dict[str, Any]], columns: list[str]) -> str:
    """Money (DECIMAL) in its row's currency's minor unit, plain notation (exact values are in the
    warehouse and the Parquet exports); floats rounded to CSV_FLOAT_DIGITS significant digits."""
    fh = io.StringIO()
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([money_text(v, r.get("currency")) if isinstance(v := r.get(c), Decimal) else csv_cell(v) for c in columns])
    return fh.getvalue()


def write_csv(path: Path, rows: Iterable[dict[str, Any]], columns: list[str]) -> Path:
    return write_text(path, csv_text(rows, columns))
