"""Rendering helpers: jinja2 environment with escaping, number formats, SVG charts, PDF."""
from __future__ import annotations

import csv
import io
from decimal import Decimal
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path
from typing import Any, Iterable

import jinja2

TEMPLATES = files("templates")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def money(x: Any, places: int = 2) -> str:
    if x is None:
        return "–"
    q = Decimal(str(x)).quantize(Decimal(1).scaleb(-places))
    return f"{q:,.{places}f}".replace("-", "−")


def number(x: Any, places: int = 0) -> str:
    if x is None:
        return "–"
    return f"{float(x):,.{places}f}".replace("-", "−")


def short_path(p: Any) -> str:
    """A path relative to the working folder when it lies below it (lineage keeps the full path)."""
    try:
        return str(Path(p).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def pct(x: Any, places: int = 0) -> str:
    return "–" if x is None else f"{float(x) * 100:.{places}f} %"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(money=money, number=number, pct=pct, short_path=short_path)
    env.globals["meterbook_version"] = version("meterbook")
    return env


def render_pdf(template: str, context: dict[str, Any], out: Path) -> Path:
    from weasyprint import HTML
    html = environment().get_template(template).render(**context)
    out.parent.mkdir(parents=True, exist_ok=True)
    HTML(string=html, base_url=str(TEMPLATES)).write_pdf(out)
    return out


def safe_cell(v: Any) -> Any:
    """Text that a spreadsheet would run as a formula is prefixed with a quote; numbers stay numbers."""
    if isinstance(v, str) and v.startswith(FORMULA_START):
        return "'" + v
    return v


def write_csv(path: Path, rows: Iterable[dict[str, Any]], columns: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([safe_cell(r.get(c)) if not isinstance(r.get(c), list) else ";".join(map(str, r.get(c)))
                        for c in columns])
    return path


def bar_chart_svg(labels: list[str], values: list[float], unit: str) -> str:
    """A horizontal bar chart as inline SVG (vector, grayscale-safe: bars are labelled with values)."""
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.family": "DejaVu Sans", "font.size": 8, "svg.fonttype": "none"})
    fig, ax = plt.subplots(figsize=(6.3, 0.22 * max(len(labels), 3) + 0.6))
    y = range(len(labels))[::-1]
    ax.barh(list(y), values, color="#4a6c8f", height=0.6)
    ax.set_yticks(list(y), labels)
    for yi, v in zip(y, values):
        ax.text(v, yi, f"  {v:,.0f}", va="center", fontsize=7)
    ax.set_xlabel(unit)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_xlim(0, max(values + [1]) * 1.18)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]
