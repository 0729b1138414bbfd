"""Published model reports -> the disclosure format of design.md (one accounting per record).

Two inputs, one shape:
* disclosure YAML (one accounting per YAML document, several documents per file), and
* Hugging Face model cards: `co2_eq_emissions` in the front matter (grams; a dict, a bare number
  or a string such as "17g") and the body's emissions / energy / hardware lines.

Parsing is pure (text in, `Disclosure` out); the two readers at the end are the only I/O. Every record carries plausibility `findings`: a value
1000x off its own body text (kg typed into the grams field), an implied grid intensity outside
the check limits (sources/reference/check_limits.csv), a metadata location that disagrees with
the body.
"""
from __future__ import annotations

import csv
import difflib
import math
import re
from dataclasses import asdict, dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import duckdb
import yaml

from core.errors import InputError
from core.sql import one_row
from core.units import G_PER_KG, KG_PER_T, KWH_PER_MWH, WH_PER_KWH
from sources.base import Head, Reader, Staged, register
from sources.bounded import LimitError, load_yaml, yaml_loader
from sources.reference_data import read_rows

COUNTRY_FILE = Path(__file__).parent / "country_timezones.csv"
MISSING = "[More Information Needed]"     # the HF template's placeholder: missing, not a value
# Titles a tool writes on every card it makes, naming no model (casefolded)
GENERATED_TITLES = ("model trained using autotrain",)
# A Hub repository id in a card's usage snippet: from_pretrained("owner/name", or AutoTrain's
# inference API URL (https://api-inference.huggingface.co/models/owner/name; older cards omit models/)
REPOSITORY_ID = re.compile(r"""(?:from_pretrained\(\s*["']|api-inference\.huggingface\.co/(?:models/)?)"""
                           r"""([A-Za-z0-9][\w.-]*/[\w.-]*[\w])""")
POWER_BASES = ("tdp", "measured", "system")
ENERGY_SCOPES = ("it", "facility")


@dataclass(frozen=True)
class Disclosure:
    """One accounting, in the units of the disclosure format (design.md)."""

    model: str | None = None
    source: str | None = None
    params: float | None = None
    active_params: float | None = None
    tokens: float | None = None
    accelerator: str | None = None
    accelerator_count: float | None = None
    accelerator_hours: float | None = None
    training_days: float | None = None
    power_w: float | None = None                 # per accelerator
    power_basis: str | None = None               # tdp | measured | system
    pue: float | None = None
    energy_scope: str | None = None              # it | facility: whether energy_mwh includes PUE
    location: str | None = None                  # ISO country, US state (US-CA) or cloud region (aws:us-east-1)
    grid_gco2e_per_kwh: float | None = None
    energy_mwh: float | None = None
    co2e_location_t: float | None = None
    co2e_market_t: float | None = None
    cost_usd: float | None = None
    price_usd_per_accelerator_hour: float | None = None
    # Extensions read by the reconstruct engine (pipelines/reconstruct/__init__.py) and used by the
    # published-footprint YAMLs; not yet in design.md's list.
    facility_type: str | None = None             # a pue.csv facility_type: hyperscale, colocation, ...
    precision: str | None = None                 # training precision: a gpu_specs peak_flops_<precision>
    market_gco2e_per_kwh: float | None = None    # contractual (market-based) factor, g/kWh
    operator: str | None = None                  # who ran the facility (operator_aliases.csv): its fleet PUE, home grid
    year: float | None = None                    # training year: selects the grid factor of that year
    convention: str | None = None                # how the reporter computed (conventions.csv): e.g. mlco2-impact
    workload: str | None = None                  # pre-training | fine-tuning | inference (workload_power.csv)
    row_number: int = 1
    findings: list[str] = field(default_factory=list)
    # Each number as written ('1.1e9', '400.0', '3,311,616'): its printed precision is a rounding
    # interval the reconstruct engine carries, and a float cannot keep it (YAML reads 7.0e+9 as
    # 7000000000.0; a DOUBLE column keeps no trailing zeros).
    number_text: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


FIELDS = tuple(f.name for f in fields(Disclosure) if f.name not in ("row_number", "findings", "number_text"))
EXTENSION_FIELDS = ("facility_type", "precision", "market_gco2e_per_kwh", "operator", "year", "convention",
                    "workload")
DESIGN_FIELDS = tuple(f for f in FIELDS if f not in EXTENSION_FIELDS)
TEXT_FIELDS = ("model", "source", "accelerator", "power_basis", "energy_scope", "location", "facility_type", "precision",
               "operator", "convention", "workload")
LOWERCASE_FIELDS = ("power_basis", "energy_scope", "facility_type", "precision", "operator", "convention", "workload")
NUMERIC_FIELDS = tuple(f for f in FIELDS if f not in TEXT_FIELDS)
REQUIRED = ("model", "source")
# Numbers that divide (a count, a duration, a power, a PUE) must be positive; figures may be zero.
MUST_BE_POSITIVE = ("params", "active_params", "tokens", "accelerator_count", "training_days", "power_w", "pue",
                    "price_usd_per_accelerator_hour", "year")
# Keys a document may carry beside the format's own (ignored): comments and x_ extensions.
FREE_KEY_PREFIXES = ("x_", "notes")
# An extension the audit sets on its own engine inputs (a disclosure with meterbook's DCGM energy in
# place of the published one, a CodeCarbon run): who measured energy_mwh at the source. IT energy
# so measured has no IT-or-facility doubt (pipelines/reconstruct/graph.py prices it on the facility).
MEASURED_BY = "x_energy_measured_by"
NUMBER_TEXT = "number_text"   # the key under which the reconstruct engine takes each number as written
TEXT_COLUMNS = {k: f"{k}_text" for k in NUMERIC_FIELDS}   # warehouse column of each number as written


@dataclass(frozen=True)
class Problem:
    """Why one YAML document cannot load; becomes a located row reject (ingest) or an Error
    line (reconstruct): ``message`` says what, ``fix`` what to do."""

    column: str | None
    check: str
    value: str | None
    message: str
    fix: str = ""


class DisclosureError(ValueError):
    """A disclosure the engine cannot read: what, where, and how to fix it."""

    def __init__(self, what: str, where: str, fix: str) -> None:
        self.what, self.where, self.fix = what, where, fix
        super().__init__(f"{what} ({where}). {fix}" if where else f"{what}. {fix}")


# ---------------------------------------------------------------- disclosure YAML

def yaml_documents(text: str) -> list[tuple[int, Any, dict[str, str]]]:
    """(row_number, document, texts) for every non-empty YAML document; yaml.YAMLError on bad syntax.

    ``texts`` holds each top-level scalar as written in the file, before YAML types it: 1.1e9
    stays a string but 7.0e+9 becomes 7000000000.0 and 400.0 becomes 400.0 == 400, so the
    typed value alone cannot tell how precisely a figure was published.
    Read within sources/input_limits.csv (no anchors or aliases): LimitError past a limit.
    """
    loader = yaml_loader(text)
    out = []
    try:
        row = 0
        while loader.check_node():   # what yaml.safe_load_all does, keeping the node of each document
            node = loader.get_node()
            row += 1
            doc = loader.construct_document(node)
            if doc is None:
                continue
            texts = {str(k.value): v.value for k, v in node.value
                     if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode)} \
                if isinstance(node, yaml.MappingNode) else {}
            out.append((row, doc, texts))
    finally:
        loader.dispose()
    return out


def document_problems(doc: Any) -> list[Problem]:
    """Everything wrong with one document: unknown keys, missing model/source, bad values.

    The one validator of the format: ingest turns each problem into a row reject, the
    reconstruct engine raises the first as a DisclosureError."""
    if not isinstance(doc, dict):
        return [Problem(None, "is_mapping", str(doc)[:200], "a disclosure document must be a mapping of field: value",
                        "Write one YAML mapping per document")]
    out = [_unknown_key(str(k), doc[k]) for k in doc if k not in FIELDS and not str(k).startswith(FREE_KEY_PREFIXES)]
    for k in REQUIRED:
        if doc.get(k) in (None, ""):
            out.append(Problem(k, "not_nullable", None, f"{k} is required", f"Every disclosure needs '{k}'"))
    for k in NUMERIC_FIELDS:
        v = doc.get(k)
        if v is None:
            continue
        x = number(v) if isinstance(v, (str, int, float)) else None
        if x is None:
            out.append(Problem(k, "parses_as_number", str(v)[:200], f"{k} '{v}' is not a number",
                               "Write a plain number such as 1.4e+12"))
        elif x < 0 or (x == 0 and k in MUST_BE_POSITIVE):
            out.append(Problem(k, "in_range", str(v)[:200], f"{k} = {v} is out of range",
                               "Use a positive number" if k in MUST_BE_POSITIVE else "Use zero or a positive number"))
    for k, allowed in allowed_text_values().items():
        if doc.get(k) is not None and str(doc[k]).strip().lower() not in allowed:
            out.append(Problem(k, f"isin({', '.join(allowed)})", str(doc[k]), f"{k} '{doc[k]}' is not one of {', '.join(allowed)}",
                               "Use one of those or leave it empty"))
    return out


def _unknown_key(key: str, value: Any) -> Problem:
    close = difflib.get_close_matches(key, FIELDS, n=1)
    fix = f"Did you mean '{close[0]}'?" if close else f"The disclosure format has: {', '.join(FIELDS)}"
    return Problem(key, "known_key", str(value)[:200], f"unknown key '{key}'", fix)


@lru_cache(maxsize=None)
def allowed_text_values() -> dict[str, tuple[str, ...]]:
    """Text fields with a closed vocabulary, the reference data naming most of them."""
    return {"power_basis": POWER_BASES, "energy_scope": ENERGY_SCOPES, "facility_type": facility_types(),
            "precision": precisions(), "operator": tuple(sorted({r["operator"] for r in read_rows("operator_aliases")})),
            "convention": tuple(r["convention"] for r in read_rows("conventions"))}


def to_disclosure(doc: dict, row_number: int = 1, texts: dict[str, str] | None = None) -> Disclosure:
    """A valid document (see document_problems) as a Disclosure, with its findings and each
    number as written (``texts`` from yaml_documents; without them, each number's shortest form)."""
    values: dict[str, Any] = {}
    for k in FIELDS:
        v = doc.get(k)
        if k in NUMERIC_FIELDS:
            values[k] = number(v)
        elif v is not None:
            values[k] = str(v).strip().lower() if k in LOWERCASE_FIELDS else str(v).strip()
    d = Disclosure(row_number=row_number, number_text=written_numbers(doc, texts or {}), **values)
    return replace(d, findings=intensity_findings(d))


def parse_disclosure_yaml(text: str) -> list[Disclosure]:
    """Every accounting in a disclosure YAML file. Strict: any problem raises ValueError naming the
    document; the ingest reader turns the same problems into row rejects instead."""
    out = []
    for row, doc, texts in yaml_documents(text):
        problems = document_problems(doc)
        if problems:
            raise ValueError(f"document {row}: " + "; ".join(f"{p.message}. {p.fix}" for p in problems))
        out.append(to_disclosure(doc, row, texts))
    return out


@lru_cache(maxsize=None)
def facility_types() -> tuple[str, ...]:
    """The facility types pue.csv has a row for (so the reconstruct engine can resolve them)."""
    return tuple(sorted({r["facility_type"] for r in read_rows("pue") if r["facility_type"]}))


@lru_cache(maxsize=None)
def precisions() -> tuple[str, ...]:
    """Precisions gpu_specs.csv has a dense peak for (metric peak_flops_<precision>)."""
    return tuple(sorted({r["metric"].removeprefix("peak_flops_") for r in read_rows("gpu_specs")
                         if r["metric"].startswith("peak_flops_")}))


def number(v: Any) -> float | None:
    """A YAML value as a number: ints, floats, and strings such as '1e9' or '3,311,616'."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(v) else None
    s = str(v).strip().replace(",", "").replace("_", "")
    try:
        x = float(s)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def number_as_text(x: float) -> str:
    """A number that comes without its printed form (a YAML int, a stored DOUBLE), in its
    shortest form; integral values without '.0', since nothing says a decimal was printed."""
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def written_numbers(doc: Mapping[str, Any], texts: Mapping[str, str]) -> dict[str, str]:
    """Each numeric field of a document as written: its text from the file when that text reads
    as the field's value (YAML's 0x1A or 1:30 do not), else the value's shortest form."""
    out: dict[str, str] = {}
    for k in NUMERIC_FIELDS:
        x = number(doc.get(k))
        if x is None:
            continue
        text = texts.get(k)
        y = number(text) if text is not None else None
        out[k] = text.strip() if text is not None and y is not None and math.isclose(y, x, rel_tol=1e-12) else number_as_text(x)
    return out


def converted_text(written: str | None, value: float | None) -> str | None:
    """A number written in one unit, re-expressed in the format's unit without touching its
    digits: '1710' (g) for 0.00171 t -> '1710e-6'. Card units differ by powers of ten only."""
    x = number(written)
    if written is None or x is None or value is None or x == 0 or value == 0:
        return written
    mantissa, _, exponent = written.strip().lower().partition("e")
    return f"{mantissa}e{int(exponent or 0) + round(math.log10(value / x))}"


def engine_input(values: Mapping[str, Any], texts: Mapping[str, str | None]) -> dict[str, Any]:
    """A disclosure as pipelines.reconstruct takes it: its values, and each number as written
    under NUMBER_TEXT. ``meterbook reconstruct`` (from the file) and the audit (from
    the warehouse) both build their input here, so both read the same printed precision."""
    return {**values, NUMBER_TEXT: {k: t for k, t in texts.items() if t is not None and values.get(k) is not None}}


def warehouse_engine_input(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `disclosures` row as engine input; a row stored before numbers kept their text has none."""
    return engine_input({k: row.get(k) for k in FIELDS}, {k: row.get(c) for k, c in TEXT_COLUMNS.items()})


# ---------------------------------------------------------------- Hugging Face model cards

def split_front_matter(text: str) -> tuple[dict, str]:
    """(front matter, body); a card without front matter has {}."""
    text = text.lstrip("\ufeff")
    m = re.match(r"---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", text, re.S)
    if not m:
        return {}, text
    meta = load_yaml(m.group(1), first_line=2) or {}   # line 1 is the opening ---
    return (meta if isinstance(meta, dict) else {}), text[m.end():]


def parse_hf_card(text: str, source: str | None = None, stem: str | None = None) -> Disclosure:
    """A Hugging Face model card as one Disclosure (co2e in tonnes, energy in MWh); ``stem``
    names it when nothing in the card does (card_name)."""
    meta, body = split_front_matter(text)
    co2 = meta.get("co2_eq_emissions")
    co2 = co2 if isinstance(co2, dict) else {"emissions": co2}
    meta_g = grams_from_meta(co2.get("emissions"))
    lines = body_lines(body)
    body_em = quantity(lines.get("emissions"), EMISSION_UNITS, lines.get("emissions_label", ""))
    body_kwh = quantity(lines.get("energy"), ENERGY_UNITS)
    meta_count, meta_hw = hardware(present(co2.get("hardware_used")))
    body_count, body_hw = hardware(lines.get("hardware"))
    meta_loc = present(co2.get("geographical_location"))
    body_loc = parenthesised(lines.get("emissions")) or cloud_region(lines.get("provider"), lines.get("region"))
    grams = meta_g if meta_g is not None else (body_em[0] if body_em else None)
    grams_text = meta_text(co2.get("emissions")) if meta_g is not None else (body_em[1] if body_em else None)
    model = card_name(meta, body, stem)
    measured_by = present(co2.get("source"))
    convention = convention_from_text(" ".join(filter(None, (measured_by, body))))
    d = Disclosure(
        model=model,
        source=(source or f"Hugging Face model card of {model}")
               + (f"; co2_eq_emissions source: {measured_by}" if measured_by else ""),
        accelerator=meta_hw or body_hw,
        accelerator_count=meta_count if meta_count is not None else body_count,
        accelerator_hours=number(first_number(lines.get("hours"))),
        location=country_code(meta_loc or body_loc or "") or meta_loc or body_loc,
        energy_mwh=body_kwh[0] / KWH_PER_MWH if body_kwh else None,
        co2e_location_t=grams / G_PER_KG / KG_PER_T if grams is not None else None,
        convention=convention,
        workload=(present(co2.get("training_type")) or "").strip().lower() or None,
    )
    found = unit_findings(meta_g, body_em) + location_findings(meta_loc, body_loc) + intensity_findings(d)
    texts = {"accelerator_hours": first_number(lines.get("hours")),
             "energy_mwh": converted_text(body_kwh[1], d.energy_mwh) if body_kwh else None,
             "co2e_location_t": converted_text(grams_text, d.co2e_location_t)}
    written = written_numbers({k: getattr(d, k) for k in NUMERIC_FIELDS}, {k: t for k, t in texts.items() if t})
    return replace(d, findings=found, number_text=written)


def cloud_region(provider: str | None, region: str | None) -> str | None:
    """A card's compute region, as '<cloud>:<region>' when its cloud provider is one meterbook knows
    (Azure's 'East US 2' -> azure:eastus2, the id Azure gives it); else the region as written."""
    cloud = CLOUD_NAMES.get((present(provider) or "").strip().lower())
    place = present(region)
    if cloud is None or place is None or country_code(place):
        return place
    name = re.sub(r"\s+", "", place) if cloud == "azure" else place.strip()
    return f"{cloud}:{name.lower()}"


def convention_from_text(text: str | None) -> str | None:
    """The reporting convention a text names (conventions.csv ``detect``), when exactly one."""
    low = (text or "").lower()
    hits = [r["convention"] for r in read_rows("conventions")
            if any(p.strip().lower() in low for p in r["detect"].split("|") if p.strip())]
    return hits[0] if len(hits) == 1 else None


def present(v: Any) -> str | None:
    """A card value, or None for blanks and the template's '[More Information Needed]'."""
    if v is None:
        return None
    s = str(v).strip()
    return None if not s or MISSING.lower() in s.lower() else s


def grams_from_meta(v: Any) -> float | None:
    """co2_eq_emissions.emissions is grams; strings like '17g' keep their first number (as huggingface_hub)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return number(first_number(present(v)))


def meta_text(v: Any) -> str | None:
    """The number of a front-matter value as written: YAML has typed a bare number already."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return number_as_text(v)
    return first_number(present(v))


def first_number(s: str | None) -> str | None:
    m = re.search(r"\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?", s or "")
    return m.group(0) if m else None


# Labels of the card body lines we read ("- **Emissions:** 1.46 KgCO2 (Singapore)", the HF
# template's "- **Carbon Emitted:** ...", AutoTrain's "- CO2 Emissions (in grams): 25.4").
LINE_LABELS = {
    "emissions": r"carbon emitted|co2 emissions|co2eq emissions|carbon emissions|carbon emission|emissions",
    "energy": r"total energy consumption|energy consumption|energy consumed|energy used|energy",
    "hardware": r"hardware type|hardware used|gpus?|hardware",
    "hours": r"hours used|hours",
    "region": r"compute region|geographical location|location",
    "provider": r"cloud provider",
}
# The Hugging Face card template's 'Cloud Provider' as a cloud of reference_data.PROVIDERS: with it, the
# card's 'Compute Region' is that cloud's region ('AWS' + 'US-east' -> aws:us-east), not a place name.
CLOUD_NAMES = {"aws": "aws", "amazon web services": "aws", "amazon": "aws", "azure": "azure",
               "microsoft azure": "azure", "gcp": "gcp", "google cloud": "gcp", "google cloud platform": "gcp"}
EMISSION_UNITS = {"t": G_PER_KG * KG_PER_T, "tonnes": G_PER_KG * KG_PER_T, "tons": G_PER_KG * KG_PER_T,
                  "tco2": G_PER_KG * KG_PER_T, "kg": G_PER_KG, "kgco2": G_PER_KG, "kilograms": G_PER_KG,
                  "g": 1.0, "grams": 1.0, "gco2": 1.0}
ENERGY_UNITS = {"mwh": KWH_PER_MWH, "kwh": 1.0, "wh": 1.0 / WH_PER_KWH}


def body_lines(body: str) -> dict[str, str]:
    """First value of each known label in the body's 'label: value' lines."""
    out: dict[str, str] = {}
    for line in body.splitlines():
        # "- **Label:** value", "- **Label**: value", "Label (in grams): value"; and a bullet without
        # a colon, "- Carbon emission 0.1069 Kg", where the label ends at the first digit
        m = (re.match(r"^\s*(?:[-*+]\s*)?\**\s*([A-Za-z0-9 ]+?)\s*(\([^)]*\))?\s*(?::\s*\**|\**\s*:)\s*(.+?)\s*$", line)
             or re.match(r"^\s*[-*+]\s*\**\s*([A-Za-z ]+?)()\**\s+(\d[\d.,]*\s*[A-Za-z].*?)\s*$", line))
        if not m:
            continue
        label = m.group(1).strip().lower()
        for key, pattern in LINE_LABELS.items():
            if key not in out and re.fullmatch(pattern, label) and present(m.group(3)):
                out[key] = m.group(3)
                if key == "emissions":
                    out["emissions_label"] = m.group(2) or ""
    return out


def quantity(value: str | None, units: dict[str, float], label: str = "") -> tuple[float, str, int] | None:
    """(value in the smallest listed unit (g or kWh), number as written, decimals) from '1.46 KgCO2'."""
    if not value:
        return None
    m = re.search(r"(\d[\d,]*(?:\.\d+)?)\s*([A-Za-z]+[0-9]?(?:e?q)?)?", value)
    if not m:
        return None
    unit = (m.group(2) or "").lower().rstrip("eq")
    if unit not in units:
        grams_in_label = "gram" in label.lower() and units is EMISSION_UNITS
        if not grams_in_label:
            return None
        unit = "g"
    raw = m.group(1).replace(",", "")
    decimals = len(raw.split(".")[1]) if "." in raw else 0
    return float(raw) * units[unit], m.group(1), decimals


def hardware(s: str | None) -> tuple[float | None, str | None]:
    """'1 NVIDIA A100-SXM4-40GB' or '8 x V100' -> (count, name); a bare name has no count."""
    if not s:
        return None, None
    m = re.match(r"^\s*(\d+)\s*(?:x\s+|×\s*)?(.+)$", s)
    if m and not re.match(r"^\d", m.group(2)):
        return float(m.group(1)), m.group(2).strip()
    return None, s.strip()


def parenthesised(s: str | None) -> str | None:
    m = re.search(r"\(([^)]+)\)\s*$", s or "")
    return present(m.group(1)) if m else None


def card_name(meta: dict, body: str, stem: str | None = None) -> str:
    """What identifies a card's model: its model-index name, its repository id, model_name, its
    own title (not a tool's fixed one), then the file's stem. AutoTrain titles every card "Model
    Trained Using AutoTrain", so five such cards were five identical entities in the audit."""
    title = heading(body)
    own_title = title if title and title.casefold() not in GENERATED_TITLES and "{{" not in title else None
    return (model_index_name(meta) or repository_id(body) or present(meta.get("model_name")) or own_title
            or stem or "unknown model")


def repository_id(body: str) -> str | None:
    """owner/name of the Hub repository a card's usage snippet loads (from_pretrained("owner/name"),
    or the inference API URL AutoTrain cards print)."""
    m = REPOSITORY_ID.search(body)
    return m.group(1) if m else None


def card_stem(path: Path) -> str:
    """A card file's stem; a README.md (what every Hub repository calls its card) by its folder."""
    return path.resolve().parent.name if path.stem.casefold() == "readme" else path.stem


def unique_card_name(con: duckdb.DuckDBPyConnection, name: str, path: Path) -> str:
    """A card's name, unique in the warehouse: when another file's disclosure has it, this card is
    named with its file beside it (two cards of one repository are two accountings, not one)."""
    taken = one_row(con, "select count(*) from disclosures join source_files using (file_id) "
                         "where model = ? and path <> ?", [name, str(path.resolve())])[0]
    return f"{name} ({path.name})" if taken else name


def heading(body: str) -> str | None:
    # The HF template's title is "# Model Card for {{ model_id }}"
    m = re.search(r"^#\s+(?:Model Card for\s+)?(.+?)\s*$", body, re.M | re.I)
    return m.group(1) if m else None


def model_index_name(meta: dict) -> str | None:
    idx = meta.get("model-index")
    if isinstance(idx, list) and idx and isinstance(idx[0], dict):
        return present(idx[0].get("name"))
    return None


@lru_cache(maxsize=None)
def _country_index() -> dict[str, str]:
    """Lower-cased ISO codes and names -> ISO 3166-1 alpha-2 (from sources/country_timezones.csv)."""
    with open(COUNTRY_FILE, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    index: dict[str, str] = {}
    for r in rows:
        names = [r["iso2"], r["iso3"], r["country_name"], *filter(None, r["other_names"].split(";"))]
        for n in names:
            index.setdefault(n.strip().lower(), r["iso2"])
    return index


def country_code(name: str) -> str | None:
    """ISO alpha-2 for a country name or code, None when it names no country (e.g. a cloud region)."""
    return _country_index().get(name.strip().lower()) if name else None


# ---------------------------------------------------------------- plausibility findings

def unit_findings(meta_g: float | None, body: tuple[float, str, int] | None) -> list[str]:
    """The metadata grams against the body's own figure: a power-of-1000 gap is a unit slip."""
    if meta_g is None or body is None or meta_g <= 0 or body[0] <= 0:
        return []
    body_g, written, decimals = body
    orders = round(math.log10(body_g / meta_g))
    if orders == round(math.log10(G_PER_KG)):
        return [f"co2_eq_emissions.emissions is {meta_g:g} g but the card's text says {written} kg "
                f"({body_g:g} g): a kg value typed into the grams field (1000x too small)"]
    if orders == -round(math.log10(G_PER_KG)):
        return [f"co2_eq_emissions.emissions is {meta_g:g} g, 1000x the card's text ({body_g:g} g): "
                "grams typed where the text means kg, or the text is in the wrong unit"]
    # Same order of magnitude: differ by more than the body's displayed precision?
    step = body_g / float(written.replace(",", "")) * 10.0 ** -decimals
    if abs(meta_g - body_g) > step / 2:
        return [f"co2_eq_emissions.emissions is {meta_g:g} g but the card's text says {body_g:g} g"]
    return []


def location_findings(meta_loc: str | None, body_loc: str | None) -> list[str]:
    a, b = country_code(meta_loc or ""), country_code(body_loc or "")
    if a and b and a != b:
        return [f"location disagrees: metadata geographical_location {meta_loc!r} ({a}) but the text says "
                f"{body_loc!r} ({b})"]
    return []


@lru_cache(maxsize=None)
def plausible_intensity() -> tuple[float, float]:
    """(min, max) plausible grid intensity, g/kWh: the check limits grid_intensity_min/max of
    sources/reference/check_limits.csv; without that file, the span of grid_intensity.csv."""
    try:
        limits = {r["limit_id"]: float(r["value"]) for r in read_rows("check_limits")}
        return limits["grid_intensity_min"], limits["grid_intensity_max"]
    except (FileNotFoundError, KeyError):
        rows = [r for r in read_rows("grid_intensity") if r["basis"] == "location"]
        return min(float(r["low"]) for r in rows), max(float(r["high"]) for r in rows)


def intensity_findings(d: Disclosure) -> list[str]:
    lo, hi = plausible_intensity()
    out = []
    if d.co2e_location_t is not None and d.energy_mwh:
        # t / MWh = kg / kWh; x 1000 -> g / kWh
        implied = d.co2e_location_t * KG_PER_T * G_PER_KG / (d.energy_mwh * KWH_PER_MWH)
        if not lo <= implied <= hi:
            out.append(f"implied grid intensity {implied:.4g} gCO2e/kWh (co2e_location_t / energy_mwh) is outside "
                       f"the plausible {lo:g}-{hi:g} g/kWh: a unit or scope error?")
    for k in ("grid_gco2e_per_kwh", "market_gco2e_per_kwh"):
        v = getattr(d, k)
        if v is not None and not lo <= v <= hi:
            out.append(f"{k} {v:g} is outside the plausible {lo:g}-{hi:g} g/kWh")
    return out


# ---------------------------------------------------------------- readers (the only I/O here)
# Kept beside the parsing so the YAML and card formats are stated once; the functions above
# stay pure, these two classes only move their output into the warehouse.

_COLUMN_TYPES = {k: ("varchar" if k in TEXT_FIELDS else "double") for k in FIELDS}


def _read_text(head: Head) -> str:
    try:
        return head.path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(head.path, "cannot read the file as UTF-8 text", str(exc)[:120], "Save it as UTF-8") from None


def _stage_rows(con: duckdb.DuckDBPyConnection, rows: list[Disclosure]) -> None:
    cols = ", ".join(f"{k} {t}" for k, t in _COLUMN_TYPES.items())
    texts = ", ".join(f"{c} varchar" for c in TEXT_COLUMNS.values())
    con.execute(f"create or replace temp table _staged (row_number bigint, {cols}, findings varchar[], {texts})")
    if rows:
        marks = ", ".join("?" for _ in range(len(FIELDS) + len(TEXT_COLUMNS) + 2))
        con.executemany(f"insert into _staged values ({marks})",
                        [[d.row_number, *(getattr(d, k) for k in FIELDS), list(d.findings),
                          *(d.number_text.get(k) for k in TEXT_COLUMNS)] for d in rows])


@register
class DisclosureReader(Reader):
    kind = "disclosure"
    table = "disclosures"
    description = "disclosure YAML (design.md format; one accounting per YAML document)"

    def sniff(self, head: Head) -> str | None:
        name = head.path.name.lower()
        if name.endswith((".yaml", ".yml")) and re.search(r"(?m)^model\s*:", head.text):
            return "disclosure-yaml-1"
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        try:
            docs = yaml_documents(_read_text(head))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark else str(exc).splitlines()[0]
            raise InputError(head.path, "not valid YAML", where, "Fix the YAML syntax (one accounting per document, "
                             "documents separated by ---)") from None
        except LimitError as exc:
            raise exc.at(head.path) from None
        good = []
        for row, doc, texts in docs:
            problems = document_problems(doc)
            if problems:
                con.executemany("insert into _rejects values (?, ?, ?, ?, ?)",
                                [(row, p.column, p.check, p.value, f"{p.message}. {p.fix}".rstrip(". ")) for p in problems])
            else:
                good.append(to_disclosure(doc, row, texts))
        _stage_rows(con, good)
        return Staged(rows_read=len(docs), format_version="disclosure-yaml-1",
                      notes=[f"{d.model}: {f}" for d in good for f in d.findings])

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        n, with_findings, n_findings, co2 = one_row(
            con, "select count(*), count(*) filter (where len(findings) > 0), coalesce(sum(len(findings)), 0), "
                 "sum(co2e_location_t) from disclosures where file_id = ?", [file_id])
        return {"disclosures": n, "with_findings": with_findings, "findings": int(n_findings),
                "co2e_location_t": float(co2) if co2 is not None else None}


@register
class HfModelCardReader(DisclosureReader):
    kind = "hf-model-card"
    description = "Hugging Face model card (.md with co2_eq_emissions front matter or an emissions section)"

    def sniff(self, head: Head) -> str | None:
        if not head.path.name.lower().endswith(".md") or not head.text.lstrip("\ufeff").startswith("---"):
            return None
        if re.search(r"co2_eq_emissions|environmental impact|carbon emitted", head.text, re.I):
            return "hf-card"
        return None

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        try:
            d = parse_hf_card(_read_text(head), source=f"Hugging Face model card ({head.path.name})",
                              stem=card_stem(head.path))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(head.path, "front matter is not valid YAML", f"line {mark.line + 2}" if mark else "",
                             "Fix the YAML between the --- lines") from None
        except LimitError as exc:
            raise exc.at(head.path) from None
        d = replace(d, model=unique_card_name(con, d.model or "", head.path))
        _stage_rows(con, [d])
        return Staged(rows_read=1, format_version="hf-card", notes=[f"{d.model}: {f}" for f in d.findings])
