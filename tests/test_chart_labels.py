"""Chart labels are text: whatever a team or tag is called, the SVG shows it as written, and the
post-processing of matplotlib's SVG (style attributes, ids) never touches it."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from core.text import printable
from reports.charts import bar_chart_svg, daily_chart_svg

SVG = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def test_the_svg_is_svg_whatever_else_registered_xml_prefixes():
    """WeasyPrint's PDF metadata module registers the empty prefix for itself: charts drawn after
    it was imported came out as <ns0:svg>, which the HTML renderer showed as loose text."""
    import weasyprint.pdf.metadata  # noqa: F401
    svg = bar_chart_svg(["a"], [1], "USD")
    assert svg.startswith("<svg ") and "ns0:" not in svg


def test_a_label_that_names_an_id_of_the_chart_stays_as_written():
    """Before, the id scoping rewrote '#<id>' in a label as it rewrote references."""
    plain = bar_chart_svg(["a", "b"], [1, 2], "USD")
    ids = [i.split("-", 1)[1] for i in re.findall(r'\sid="([^"]+)"', plain)]
    labels = ["a", "#" + ids[-1], 'style="fill:red"', "<defs><style>x</style></defs>", "a & b"]
    svg = bar_chart_svg(labels, [1, 2, 3, 4, 5], "USD")
    for label in labels:
        assert label in texts(svg)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=3, unique=True))
def test_any_team_name_is_a_label_as_written(names):
    svg = daily_chart_svg([1, 2], {n: [1.0, 2.0] for n in names}, "USD")
    shown = texts(svg)      # the SVG parses: markup-like names are escaped
    for n in names:
        assert printable(n) in shown, (n, shown)
