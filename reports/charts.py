"""Charts as inline vector SVG (matplotlib), readable in grayscale.

Series differ by hatch pattern, marker and line style, not by colour alone, and every bar carries
its value. WeasyPrint's SVG renderer ignores part of the CSS matplotlib writes in `style="..."`
attributes, so `_svg` rewrites each declaration as a presentation attribute (stroke-width="0.8")
and drops the <style> block, on the parsed SVG (labels are text nodes, never matched as markup); text stays text (svg.fonttype none), so it is searchable in the PDF.
Output is deterministic (no date metadata, fixed id salt), so a re-render gives the same bytes.
"""
from __future__ import annotations

import hashlib
import io
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import matplotlib

from core.figures import settled
from core.text import printable
from reports.fonts import SANS

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

# Line hatches only: matplotlib writes dot and circle hatches as thousands of SVG paths
# (160 KB a chart, 1.3 s of WeasyPrint each) where line hatches take 11 KB and 0.15 s.
HATCHES = ("", "///", "xxx", "\\\\\\", "---", "|||", "+++", "/-")
GRAYS = ("#4d4d4d", "#a6a6a6", "#d9d9d9", "#7a7a7a")
MARKERS = ("o", "s", "^", "D")
LINES = ("-", "--", ":", "-.")
# Stacked segments: fill and hatch together, so neighbours differ in grayscale print.
STACK_STYLES = (("#4d4d4d", ""), ("#d9d9d9", ""), ("white", "///"), ("#a6a6a6", ""), ("white", "xxx"),
                ("white", ""), ("#7a7a7a", "\\\\\\"))
RC: dict[RcKeyType, Any] = {"font.family": "DejaVu Sans", "font.size": 7.5, "svg.fonttype": "none", "svg.hashsalt": "meterbook",
                            "hatch.linewidth": 0.6, "axes.linewidth": 0.6, "axes.edgecolor": "#333333", "text.usetex": False}
# The reports' shipped cut of DejaVu (the font matplotlib measures with), then fallbacks for
# characters it lacks: a system DejaVu named first would be embedded whole (reports/fonts.py).
FAMILY = ("font-family", f"{SANS}, DejaVu Sans, sans-serif")
SVG_NS, XLINK_NS = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"
DROPPED = {f"{{{SVG_NS}}}metadata", f"{{{SVG_NS}}}style"}
REFERENCE = re.compile(r"#([\w.-]+)")     # in attribute values only (href, url(#...)), never in text


def _label(text: object) -> str:
    # "$" would start matplotlib mathtext: a team called "a$b$" must print as written. Control
    # characters are no XML (the SVG would not parse): written out, as on the terminal.
    return printable(str(text)).replace("$", r"\$")


def _attrs(style: str) -> list[tuple[str, str]]:
    """A style attribute's declarations as presentation attributes (stroke-width="0.8")."""
    out = []
    for decl in style.split(";"):
        if ":" in decl:
            k, v = decl.split(":", 1)
            k, v = k.strip(), v.strip()
            if k == "font":   # shorthand "400 7.5px 'DejaVu Sans'": WeasyPrint wants the parts
                parts = v.split(" ", 2)
                if len(parts) == 3:
                    out += [("font-weight", parts[0]), ("font-size", parts[1]), FAMILY]
                continue
            out.append(FAMILY if k == "font-family" else (k, v.replace("'", "")))
    return out


def _svg(fig) -> str:
    """matplotlib's SVG, reworked on its parsed tree (labels stay text nodes, escaped on output):
    no <style> block or metadata, style attributes as presentation attributes, ids scoped."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    root = ET.fromstring(buf.getvalue())
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag in DROPPED:
                parent.remove(child)
    for defs in root.findall(f"{{{SVG_NS}}}defs"):
        if len(defs) == 0:
            root.remove(defs)
    for el in root.iter():
        if "style" in el.attrib:
            attrs = [kv for k, v in el.attrib.items() for kv in (_attrs(v) if k == "style" else [(k, v)])]
            el.attrib.clear()
            el.attrib.update(attrs)
    _scope_ids(root)
    _plain_names(root)
    return ET.tostring(root, encoding="unicode")


def _plain_names(root: ET.Element) -> None:
    """Element and attribute names as written in HTML (svg, xlink:href), the namespaces declared
    on the root: ElementTree would take the prefixes from its process-wide registry, where
    WeasyPrint's metadata module takes the empty prefix for itself (the SVG came out as <ns0:svg>,
    which the HTML renderer showed as loose text)."""
    for el in root.iter():
        el.tag = el.tag.rpartition("}")[2]
        for key in [k for k in el.attrib if k.startswith("{")]:
            uri, local = key[1:].split("}")
            el.attrib[f"xlink:{local}" if uri == XLINK_NS else local] = el.attrib.pop(key)
    root.set("xmlns", SVG_NS)
    root.set("xmlns:xlink", XLINK_NS)


def _scope_ids(root: ET.Element) -> None:
    """Several charts share one HTML document, so ids must be unique across them: drop the ids no
    one references (matplotlib names every group patch_1, text_1, ...) and prefix the referenced
    ones (markers, clip paths, hatches) with a hash of this chart, which stays deterministic."""
    elements = list(root.iter())
    ids = {el.attrib["id"] for el in elements if "id" in el.attrib}
    referenced = {ref for el in elements for k, v in el.attrib.items() if k != "id" for ref in REFERENCE.findall(v)} & ids
    prefix = "c" + hashlib.sha1(ET.tostring(root)).hexdigest()[:8] + "-"
    for el in elements:
        for k, v in el.attrib.items():
            if k == "id":
                el.attrib[k] = prefix + v if v in referenced else ""
            else:
                el.attrib[k] = REFERENCE.sub(lambda m: f"#{prefix}{m.group(1)}" if m.group(1) in referenced else m.group(0), v)
        if el.attrib.get("id") == "":
            del el.attrib["id"]


def _legend(ax, artists: list) -> None:
    """A legend beside the plot naming every series: labels passed as given, since matplotlib
    leaves out of its own legend a label that starts with "_" (a team may be called "_infra")."""
    ax.legend(artists, [a.get_label() for a in artists], frameon=False, fontsize=6.5, loc="upper left",
              bbox_to_anchor=(1.0, 1.0))


def _axes(width_in: float, height_in: float):
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(width_in, height_in))
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def bar_chart_svg(labels: Sequence[str], values: Sequence[float], unit: str, fmt: str = "{:,.0f}",
                  width_in: float = 6.3) -> str:
    """Horizontal bars, largest first as given; each bar hatched by rank and labelled with its value."""
    with plt.rc_context(RC):
        fig, ax = _axes(width_in, 0.2 * max(len(labels), 3) + 0.6)
        y = list(range(len(labels)))[::-1]
        for i, (yi, v) in enumerate(zip(y, values)):
            ax.barh(yi, v, color="white", edgecolor="#333333", hatch=HATCHES[i % len(HATCHES)], height=0.65,
                    linewidth=0.6)
            ax.text(v, yi, "  " + fmt.format(settled(v)), va="center", fontsize=6.5)
        ax.set_yticks(y, [_label(s) for s in labels])
        ax.set_xlabel(_label(unit))
        top = max(list(values) + [0])
        ax.set_xlim(min(list(values) + [0]) * 1.2, (top or 1) * 1.2)
        fig.tight_layout()
        return _svg(fig)


def trend_chart_svg(months: Sequence[str], series: Mapping[str, Sequence[float | None]], unit: str,
                    width_in: float = 6.3, height_in: float = 1.7) -> str:
    """One line per series over months; series differ by marker and dash, and end with a label."""
    with plt.rc_context(RC):
        fig, ax = _axes(width_in, height_in)
        x = list(range(len(months)))
        shown = []
        for i, (name, vals) in enumerate(series.items()):
            pts = [(xi, v) for xi, v in zip(x, vals) if v is not None]
            if not pts:
                continue
            shown += ax.plot([p[0] for p in pts], [p[1] for p in pts], color="#222222", marker=MARKERS[i % 4],
                             linestyle=LINES[i % 4], linewidth=1, markersize=3.5, label=_label(name))
        ax.set_xticks(x, list(months))
        ax.set_ylabel(_label(unit))
        ax.set_ylim(bottom=0)
        if len(series) > 1:
            _legend(ax, shown)
        fig.tight_layout()
        return _svg(fig)


def tornado_chart_svg(rows: Sequence[dict], central: float, unit: str, width_in: float = 6.3) -> str:
    """Tornado: each assumption's low end (hatched ///) and high end (cross-hatched xxx) around the central value
    (the vertical line); the template's caption says so, the axis label only carries the unit."""
    rows = list(rows)[:8]
    with plt.rc_context(RC):
        fig, ax = _axes(width_in, 0.25 * max(len(rows), 2) + 0.7)
        y = list(range(len(rows)))[::-1]
        for yi, r in zip(y, rows):
            for end, hatch in (("low", "///"), ("high", "xxx")):
                v = r[end]
                ax.barh(yi, v - central, left=central, color="white", edgecolor="#333333", hatch=hatch,
                        height=0.6, linewidth=0.6)
        ax.axvline(central, color="#000000", linewidth=0.8)
        ax.set_yticks(y, [_label(r["assumption"]) for r in rows])
        ax.set_xlabel(_label(unit))
        fig.tight_layout()
        return _svg(fig)


def range_chart_svg(labels: Sequence[str], values: Sequence[float], lows: Sequence[float],
                    highs: Sequence[float], reported: Sequence[float | None], unit: str, width_in: float = 6.3) -> str:
    """Central value as a hatched bar with a low-high whisker; a reported figure as a black diamond."""
    with plt.rc_context(RC):
        fig, ax = _axes(width_in, 0.3 * max(len(labels), 2) + 0.7)
        y = list(range(len(labels)))[::-1]
        for i, (yi, v, lo, hi, rep) in enumerate(zip(y, values, lows, highs, reported)):
            ax.barh(yi, v, color="white", edgecolor="#333333", hatch=HATCHES[(i % 3) + 1], height=0.55, linewidth=0.6)
            ax.plot([lo, hi], [yi, yi], color="#000000", linewidth=1.2)
            ax.plot([lo, lo], [yi - 0.15, yi + 0.15], color="#000000", linewidth=1.2)
            ax.plot([hi, hi], [yi - 0.15, yi + 0.15], color="#000000", linewidth=1.2)
            if rep is not None:
                ax.plot([rep], [yi], marker="D", color="#000000", markersize=4, linestyle="none")
        ax.set_yticks(y, [_label(s) for s in labels])
        ax.set_xlabel(_label(unit))
        ax.set_xlim(left=0)
        fig.tight_layout()
        return _svg(fig)


def daily_chart_svg(days: Sequence[int], series: Mapping[str, Sequence[float]], unit: str,
                    width_in: float = 6.3, height_in: float = 1.9) -> str:
    """Stacked bars per day of the month, one segment per series (team), told apart by hatch and
    gray, with a legend beside the plot; negative days (credits) stack below zero."""
    with plt.rc_context(RC):
        fig, ax = _axes(width_in, height_in)
        pos = [0.0] * len(days)
        neg = [0.0] * len(days)
        shown = []
        for i, (name, vals) in enumerate(series.items()):
            base = [p if v >= 0 else n for v, p, n in zip(vals, pos, neg)]
            color, hatch = STACK_STYLES[i % len(STACK_STYLES)]
            shown.append(ax.bar(list(days), list(vals), bottom=base, width=0.8, color=color, edgecolor="#333333",
                                hatch=hatch, linewidth=0.4, label=_label(name)))
            pos = [p + v if v >= 0 else p for v, p in zip(vals, pos)]
            neg = [n + v if v < 0 else n for v, n in zip(vals, neg)]
        ax.set_xticks(list(days)[::2] if len(days) > 16 else list(days))
        ax.set_xlim(min(days) - 0.7, max(days) + 0.7)
        ax.set_xlabel("day of the month")
        ax.set_ylabel(_label(unit))
        _legend(ax, shown)
        fig.tight_layout()
        return _svg(fig)
