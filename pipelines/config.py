"""meterbook.toml: how a platform maps its tags, namespaces, accounts and hosts to teams, and how
shared, idle and untagged spend is allocated.

Every key is optional; the defaults below apply when a key or the whole file is absent. Every key
that is present is checked: a misspelled section ([host] for [hosts]) or key would otherwise be
ignored and move money between teams without a word, so it stops with the line and the nearest
known name. The annotated example is pipelines/meterbook.example.toml (printed by --help).
"""
from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import duckdb

from core.errors import InputError
from core.text import printable, team_name
from core.vocabulary import CATEGORIES, CHARGE_BY, MIG_SLICES, MIG_UNUSED, RULES, SHARING_DEFAULTS
from sources.bounded import LimitError, limit, load_toml

DEFAULT_RULES = {"idle": "proportional", "untagged": "unallocated", "shared_services": "proportional",
                 "commitment": "proportional", "credits": "proportional"}
RULE_FIELDS = ("namespace", "account", "service")
ENGINES = ("duckdb", "spark")    # where the build runs: one machine, or Spark (README, "Beyond one machine")
# GHG Protocol Corporate Standard, chapter 3: the ways an organisation draws its boundary.
CONSOLIDATION = ("operational control", "financial control", "equity share")
# [findings] keys are the assumptions.csv rows with this prefix (findings_month.sql looks them up so)
FINDINGS_PREFIX = "findings_"
# [whatif] numbers likewise: util_target, spot_share, shift_window_h (whatif_month.sql)
WHATIF_PREFIX = "whatif_"
# Who owns the hardware decides the GHG scope of its electricity and embodied emissions
# (pipelines/sql/20_intermediate/int_resource_ownership.sql): a rented cloud instance is a
# purchased service, owned or controlled equipment (in the organisation's room or a colocation
# cage) is the organisation's own.
OWNERSHIP = ("cloud", "colocation", "on-premises")
# [scopes] tables, from the narrowest: a resource beats its account, an account its provider
OWNERSHIP_LEVELS = ("resources", "accounts", "providers")
# Hourly series carry direct (combustion) or life-cycle factors; the annual factors of
# grid_intensity.csv are life-cycle (OWID/Ember and Google's figures use IPCC life-cycle factors).
FACTOR_TYPES = ("lifecycle", "direct")
# What a legacy [carbon.market_intensity_g_per_kwh] factor says about its provenance
UNDECLARED_SOURCE = "meterbook.toml [carbon.market_intensity_g_per_kwh]: no source or year declared"
# [currency] rate_rule: which loaded rate converts a charge (int_fx_rates.sql, team_currency_month.sql)
RATE_RULES = ("day", "month_average", "budget")
# [currency] rounding of a converted amount to the reporting currency's minor unit
ROUNDING_MODES = ("half_even", "half_up")


def example_text() -> str:
    """The annotated example meterbook.toml shipped with the package."""
    return (files("pipelines") / "meterbook.example.toml").read_text(encoding="utf-8")


# ---- what a meterbook.toml may hold ----------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """A leaf: kind is 'string', 'number' or 'strings' (an array of strings)."""
    kind: str
    minimum: float | None = None     # numbers: the smallest allowed value
    maximum: float | None = None     # numbers: the largest; None: config_number_max in magnitude
    limits: str = ""                 # the input_limits.csv rows the range comes from, for messages
    choices: tuple[str, ...] = ()    # strings: the allowed values
    example: str = ""


@dataclass(frozen=True)
class Section:
    """A table with a fixed set of keys."""
    keys: dict[str, Any]


@dataclass(frozen=True)
class Mapping:
    """A table of user-chosen names (namespaces, hosts, teams, zones), every value alike."""
    value: Value
    what: str          # 'namespace = team', for messages


@dataclass(frozen=True)
class Entries:
    """An array of tables ([[teams.rules]])."""
    section: Section


def finding_params(prefix: str = FINDINGS_PREFIX) -> tuple[str, ...]:
    from sources.reference_data import read_rows
    return tuple(sorted(r["assumption_id"].removeprefix(prefix) for r in read_rows("assumptions")
                        if r["assumption_id"].startswith(prefix)))


def schema() -> Section:
    string, number = Value("string", example='"..."'), Value("number", example="1")
    non_negative = Value("number", minimum=0, example="1")
    intensity = Value("number", minimum=0, maximum=limit("config_intensity_max"), limits="config_intensity_max",
                      example="290")
    return Section({
        "teams": Section({
            "tag_keys": Value("strings", example='["team", "cost-center"]'),
            "unallocated": string,
            "namespaces": Mapping(string, "namespace = team"),
            "accounts": Mapping(string, '"account id" = team'),
            "rules": Entries(Section({"field": string, "pattern": string, "team": string})),
        }),
        "allocation": Section({**{c: Value("string", choices=RULES, example='"proportional"') for c in CATEGORIES},
                               "weights": Mapping(non_negative, "team = weight"),
                               "charge_by": Value("string", choices=CHARGE_BY, example='"request"'),
                               "mig_slices": Value("string", choices=MIG_SLICES, example='"compute"'),
                               "mig_unused": Value("string", choices=MIG_UNUSED, example='"unallocated"')}),
        "hosts": Mapping(string, "host = resource id"),
        "telemetry": Section({"interval_s": bounded("config_interval_s", "30"), "gap_multiple": bounded("config_gap_multiple", "4"),
                              "default_zone": string}),
        "carbon": Section({
            "market_intensity_g_per_kwh": Mapping(intensity, '"zone" = g_per_kwh'),
            "supplier_factors": Entries(Section({"zone": string, "g_per_kwh": intensity, "source": string,
                                                 "year": Value("number", minimum=1990, maximum=limit("config_year_max"),
                                                               limits="config_year_max", example="2025")})),
            "grid_zones": Mapping(string, '"zone" = "grid zone"'),
            "hourly_factor_type": Value("string", choices=FACTOR_TYPES, example='"lifecycle"'),
        }),
        "findings": Section({k: number for k in finding_params()}),
        "audit": Section({"consolidation": Value("string", choices=CONSOLIDATION, example='"operational control"'),
                          "host_overhead": Value("string", choices=("excluded", "included"), example='"excluded"')}),
        "scopes": Section({level: Mapping(Value("string", choices=OWNERSHIP, example='"on-premises"'),
                                          f'"{what}" = "cloud" | "colocation" | "on-premises"')
                           for level, what in zip(OWNERSHIP_LEVELS, ("resource id", "account id", "provider"))}),
        "whatif": Section({
            **{k: non_negative for k in finding_params(WHATIF_PREFIX)},
            "regions": Value("strings", example='["aws:us-west-2", "aws:eu-north-1"]'),
            "deferrable_namespaces": Value("strings", example='["llm-finetune"]'),
            "deferrable_jobs": Value("strings", example='["embed-batch-0"]'),
        }),
        "prometheus": Section({"url": Value("string", example='"https://prometheus.example:9090"'),
                               "token_file": string, "user": string, "password_file": string, "ca_file": string,
                               "headers": Mapping(string, '"X-Scope-OrgID" = "tenant"'),
                               "max_points": Value("number", minimum=1, example="11000"),
                               "max_samples": Value("number", minimum=1, example="50000000")}),
        "clusters": Entries(Section({
            "name": string, "gpus": Value("number", minimum=1, example="64"), "gpu_model": Value("string", example='"H100-SXM5-80GB"'),
            "partitions": Value("strings", example='["gpu"]'), "hosts": Value("strings", example='["gpu-a01", "gpu-a02"]'),
            "capex_usd_per_gpu": non_negative, "lifetime_years": Value("number", minimum=0.1, example="4"),
            "electricity_usd_per_kwh": non_negative, "ops_usd_per_gpu_month": non_negative,
            "pue": Value("number", minimum=1, example="1.3"),
        })),
        "currency": Section({
            "reporting": Value("string", example='"USD"'),
            "rate_rule": Value("string", choices=RATE_RULES, example='"month_average"'),
            "rounding": Value("string", choices=ROUNDING_MODES, example='"half_even"'),
            "budget_rates": Mapping(Value("number", minimum=0, example="1.08"), '"EUR" = reporting units per unit'),
            "budget_source": string,
        }),
        "engine": Section({"name": Value("string", choices=ENGINES, example='"duckdb"'), "master": Value("string", example='"local[2]"'),
                           "warehouse": Value("string", example='"s3://bucket/meterbook"'),
                           "conf": Mapping(Value("string", example='"8g"'), '"spark.key" = "value"')}),
    })


def bounded(limit_id: str, example: str) -> Value:
    """A number within the <limit_id>_min and _max rows of sources/input_limits.csv."""
    return Value("number", minimum=limit(f"{limit_id}_min"), maximum=limit(f"{limit_id}_max"),
                 limits=f"{limit_id}_min, {limit_id}_max", example=example)


# ---- the parsed configuration ------------------------------------------------------------------

@dataclass(frozen=True)
class EngineConfig:
    name: str = "duckdb"
    master: str | None = None        # Spark master; None: the launcher's (spark-submit), else local[2]
    warehouse: str | None = None     # Spark warehouse URI
    conf: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PrometheusConfig:
    """[prometheus]: where `meterbook ingest` pulls telemetry from. Secrets only by file or
    environment (sources/prometheus_pull.py), never in the file itself."""
    url: str | None = None
    token_file: str | None = None
    user: str | None = None
    password_file: str | None = None
    ca_file: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    max_points: int | None = None
    max_samples: int | None = None


@dataclass(frozen=True)
class TeamRule:
    field: str          # 'tag' | 'namespace' | 'account' | 'service'
    tag_key: str | None
    pattern: str
    team: str


@dataclass(frozen=True)
class SupplierFactor:
    """A supplier-specific emission factor (market-based Scope 2) for a zone, with its provenance."""
    zone: str
    g_per_kwh: float
    source: str
    year: int | None    # None: a legacy [carbon.market_intensity_g_per_kwh] entry, which declares none


@dataclass(frozen=True)
class Cluster:
    """An owned cluster ([[clusters]]): its GPUs and what it costs. A figure left out takes the
    sourced default of sources/reference (capital_costs.csv by gpu_model, assumptions.csv)."""
    name: str
    gpus: float
    gpu_model: str | None = None
    partitions: tuple[str, ...] = ()      # Slurm partitions of the cluster (else its sacct Cluster name)
    hosts: tuple[str, ...] = ()           # telemetry hosts whose measured energy is the cluster's power
    capex_usd_per_gpu: float | None = None
    lifetime_years: float | None = None
    electricity_usd_per_kwh: float | None = None
    ops_usd_per_gpu_month: float | None = None
    pue: float | None = None


@dataclass(frozen=True)
class CurrencyConfig:
    """[currency]: the one currency the chargeback reports in, and how a charge billed in another
    is converted. reporting None: the month's only billing currency (a month billed in several
    needs it). Budget rates are reporting-currency units per unit of the billing currency."""
    reporting: str | None = None
    rate_rule: str = "month_average"
    rounding: str = "half_even"
    budget_rates: dict[str, float] = field(default_factory=dict)
    budget_source: str = "meterbook.toml [currency.budget_rates]"


@dataclass(frozen=True)
class Config:
    tag_keys: tuple[str, ...] = ("team", "cost-center", "project")
    unallocated: str = "unallocated"
    namespace_teams: dict[str, str] = field(default_factory=dict)
    account_teams: dict[str, str] = field(default_factory=dict)
    team_rules: tuple[TeamRule, ...] = ()
    allocation: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_RULES))
    weights: dict[str, float] = field(default_factory=dict)
    sharing: dict[str, str] = field(default_factory=lambda: dict(SHARING_DEFAULTS))   # charge_by, mig_slices, mig_unused
    hosts: dict[str, str] = field(default_factory=dict)
    interval_s: float = 30.0
    gap_multiple: float = 4.0
    default_zone: str = ""
    market_intensity: dict[str, float] = field(default_factory=dict)
    supplier_factors: tuple[SupplierFactor, ...] = ()
    grid_zones: dict[str, str] = field(default_factory=dict)
    hourly_factor_type: str = FACTOR_TYPES[0]
    findings: dict[str, float] = field(default_factory=dict)
    consolidation: str = "operational control"   # the footprint audit's stated boundary
    host_overhead: str = "excluded"              # "included": host power beyond the GPUs, modelled
    # [scopes]: (level, name) -> ownership, overriding the default of the billing source
    ownership: dict[tuple[str, str], str] = field(default_factory=dict)
    whatif: dict[str, float] = field(default_factory=dict)
    whatif_regions: tuple[str, ...] = ()
    deferrable_namespaces: tuple[str, ...] = ()
    deferrable_jobs: tuple[str, ...] = ()
    clusters: tuple[Cluster, ...] = ()
    currency: CurrencyConfig = field(default_factory=CurrencyConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    prometheus: PrometheusConfig = field(default_factory=PrometheusConfig)
    path: str | None = None
    sha256: str | None = None     # of the file's bytes; None = no file, the defaults


def load_config(path: str | Path | None) -> Config:
    """Read and check meterbook.toml; no path gives the defaults, a broken file an InputError."""
    if path is None:
        return Config()
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "config file not found", "", "Pass --config with the path of your meterbook.toml, or omit it to use the defaults")
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8")
        doc = load_toml(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(p, "not valid TOML", str(exc), "Fix the syntax; `meterbook --help` prints an example") from None
    except LimitError as exc:
        raise exc.at(p) from None
    check(doc, schema(), (), Locator(p, text))
    teams, tel, alloc = doc.get("teams", {}), doc.get("telemetry", {}), doc.get("allocation", {})
    carbon, whatif = doc.get("carbon", {}), doc.get("whatif", {})
    return Config(
        tag_keys=tuple(teams.get("tag_keys", Config.tag_keys)),
        unallocated=typed_team(p, "[teams] unallocated", teams.get("unallocated", Config.unallocated)),
        namespace_teams={k: typed_team(p, f"[teams.namespaces] {k}", v) for k, v in teams.get("namespaces", {}).items()},
        account_teams={k: typed_team(p, f"[teams.accounts] {k}", v) for k, v in teams.get("accounts", {}).items()},
        team_rules=tuple(parse_rule(p, text, i, r) for i, r in enumerate(teams.get("rules", []))),
        allocation=parse_allocation(p, text, alloc),
        weights={typed_team(p, f"[allocation.weights] {k}", k): float(v) for k, v in alloc.get("weights", {}).items()},
        sharing={k: alloc.get(k, v) for k, v in SHARING_DEFAULTS.items()},
        hosts=dict(doc.get("hosts", {})),
        interval_s=float(tel.get("interval_s", Config.interval_s)),
        gap_multiple=float(tel.get("gap_multiple", Config.gap_multiple)),
        default_zone=tel.get("default_zone", ""),
        market_intensity={k: float(v) for k, v in carbon.get("market_intensity_g_per_kwh", {}).items()},
        supplier_factors=tuple(parse_supplier(p, text, i, e) for i, e in enumerate(carbon.get("supplier_factors", []))),
        grid_zones=dict(carbon.get("grid_zones", {})),
        hourly_factor_type=carbon.get("hourly_factor_type", FACTOR_TYPES[0]),
        findings={k: float(v) for k, v in doc.get("findings", {}).items()},
        consolidation=doc.get("audit", {}).get("consolidation", Config.consolidation),
        host_overhead=doc.get("audit", {}).get("host_overhead", Config.host_overhead),
        ownership={(level, name): v for level, names in doc.get("scopes", {}).items() for name, v in names.items()},
        whatif=parse_whatif(p, text, whatif),
        whatif_regions=tuple(whatif.get("regions", ())),
        deferrable_namespaces=tuple(whatif.get("deferrable_namespaces", ())),
        deferrable_jobs=tuple(whatif.get("deferrable_jobs", ())),
        clusters=parse_clusters(p, text, doc.get("clusters", [])),
        currency=parse_currency(p, text, doc.get("currency", {})),
        engine=EngineConfig(**doc.get("engine", {})),
        prometheus=parse_prometheus(doc.get("prometheus", {})),
        path=str(p),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


# ---- checking a parsed document against the schema -------------------------------------------

def check(doc: dict, spec: Section, at: tuple[str, ...], loc: "Locator", index: int | None = None) -> None:
    """Every key of `doc` (the table at path `at`) must be one `spec` knows, with the right type."""
    for key, value in doc.items():
        if key not in spec.keys:
            raise unknown(key, value, spec, at, loc, index)
        sub = spec.keys[key]
        here = at + (key,)
        if isinstance(sub, Section):
            expect_table(value, here, loc, index, "a table of keys")
            check(value, sub, here, loc, index)
        elif isinstance(sub, Mapping):
            expect_table(value, here, loc, index, f"a table of {sub.what}")
            for name, v in value.items():
                check_value(v, sub.value, here, name, loc, index)
        elif isinstance(sub, Entries):
            if not (isinstance(value, list) and all(isinstance(v, dict) for v in value)):
                raise InputError(loc.path, f"{name_of(here, None)} is {toml_type(value)}", loc.where(at, key, index),
                                 f"Write each entry as its own [[{'.'.join(here)}]] table")
            for i, entry in enumerate(value):
                check(entry, sub.section, here, loc, i)
        else:
            check_value(value, sub, at, key, loc, index)


def unknown(key: str, value: Any, spec: Section, at: tuple[str, ...], loc: "Locator", index: int | None) -> InputError:
    """`unknown section [host] (line 12). Did you mean [hosts]?`, or the same for a key."""
    is_table = isinstance(value, dict)
    kind = "section" if is_table else "key"
    shown = f"[{'.'.join(at + (key,))}]" if is_table else f"{key}{in_section(at, index)}"
    close = difflib.get_close_matches(key, list(spec.keys), n=1, cutoff=0.6)
    if close and isinstance(spec.keys[close[0]], (Section, Mapping, Entries)):
        fix = f"Did you mean [{'.'.join(at + (close[0],))}]?"
    elif close:
        fix = f"Did you mean {close[0]}?"
    else:
        fix = f"Known {'sections' if not at else 'keys'} here: {', '.join(spec.keys) or 'none'}"
        home = [s for s, sub in schema().keys.items() if isinstance(sub, Section) and key in sub.keys] if not at else []
        if home:
            fix = f"Did you mean {key} under [{home[0]}]?"
    return InputError(loc.path, f"unknown {kind} {shown}", loc.where(at, key, index, is_table), fix)


def expect_table(value: Any, here: tuple[str, ...], loc: "Locator", index: int | None, what: str) -> None:
    if not isinstance(value, dict):
        raise InputError(loc.path, f"{name_of(here, index)} is {toml_type(value)}: expected {what}",
                         loc.where(here[:-1], here[-1], index), f"Write it as a [{'.'.join(here)}] section")


def check_value(value: Any, spec: Value, at: tuple[str, ...], key: str, loc: "Locator", index: int | None) -> None:
    """One leaf: its type, then its range or allowed values."""
    where = loc.where(at, key, index)
    shown = f"{prefix(at, index)}{key} = {toml_literal(value)}"
    if spec.kind == "number":
        if not is_number(value):
            hint = f"Write it without quotes: {key} = {value.strip()}" if isinstance(value, str) and is_numeric_text(value) \
                else f"e.g. {key} = {spec.example}"
            raise InputError(loc.path, f"{shown}: expected a number, not {toml_type(value)}", where, hint)
        if not in_range(value, spec):
            raise InputError(loc.path, f"{shown}: expected a number {range_text(spec)}", where, f"e.g. {key} = {spec.example}")
    elif spec.kind == "strings":
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise InputError(loc.path, f"{shown}: expected an array of strings, not {toml_type(value)}", where,
                             f"e.g. {key} = {spec.example}")
    elif not isinstance(value, str):
        hint = f'Quote it: {key} = "{value}"' if is_number(value) else f"e.g. {key} = {spec.example}"
        raise InputError(loc.path, f"{shown}: expected a string, not {toml_type(value)}", where, hint)
    elif spec.choices and value not in spec.choices:
        close = difflib.get_close_matches(value, spec.choices, n=1, cutoff=0.6)
        raise InputError(loc.path, f"{shown}: expected one of {', '.join(spec.choices)}", where,
                         f'Did you mean "{close[0]}"?' if close else f"e.g. {key} = {spec.example}")


def in_range(value: float, spec: Value) -> bool:
    """Finite, within the key's own bounds, and never past config_number_max in magnitude: a
    number no platform states (1e-300 s, 1e308 g/kWh) would move money between teams unseen."""
    most = spec.maximum if spec.maximum is not None else limit("config_number_max")
    low_ok = spec.minimum is None or value >= spec.minimum
    return math.isfinite(value) and low_ok and value <= most and abs(value) <= limit("config_number_max")


def range_text(spec: Value) -> str:
    """'from 1 to 86400 (config_interval_s_min, config_interval_s_max)', 'between -1e+12 and 1e+12 (config_number_max)'."""
    most = spec.maximum if spec.maximum is not None else limit("config_number_max")
    rows = spec.limits or "config_number_max"
    if spec.minimum is None:
        return f"between {-most:g} and {most:g} ({rows})"
    return f"from {spec.minimum:g} to {most:g} ({rows})"


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_numeric_text(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def toml_type(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if is_number(v):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return "a date or time"


def toml_literal(v: Any) -> str:
    """A value as it was written, roughly (for messages; long ones cut)."""
    text = "true" if v is True else "false" if v is False else json.dumps(v, default=str) if not isinstance(v, (int, float)) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def in_section(at: tuple[str, ...], index: int | None) -> str:
    if not at:
        return " at the top level"
    return f" in [[{'.'.join(at)}]] #{index + 1}" if index is not None else f" in [{'.'.join(at)}]"


def prefix(at: tuple[str, ...], index: int | None) -> str:
    """How a key is named in messages: `[telemetry] interval_s`, `[[teams.rules]] #2 team`."""
    if not at:
        return ""
    return f"[[{'.'.join(at)}]] #{index + 1} " if index is not None else f"[{'.'.join(at)}] "


def name_of(here: tuple[str, ...], index: int | None) -> str:
    return f"{prefix(here[:-1], index)}{here[-1]}"


class Locator:
    """Line numbers for messages: tomllib keeps no positions, so the text is searched for the
    section header, then for the key below it (plain, quoted, or inside an inline table)."""

    HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def _header(self, line: str) -> tuple[tuple[str, ...], bool] | None:
        m = self.HEADER.match(line)
        if not m:
            return None
        parts = tuple(p.strip().strip("\"'") for p in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', m.group(2)))
        return parts, m.group(1) == "[["

    @staticmethod
    def _code(line: str) -> str:
        """The line without its comment; a line with a quote before its # keeps it whole (the #
        may sit inside a string, and a key search on the whole line is harmless)."""
        before = line.split("#", 1)[0]
        return line if '"' in before or "'" in before else before

    def where(self, at: tuple[str, ...], key: str, index: int | None = None, is_table: bool = False) -> str:
        n = self.find(at, key, index, is_table)
        return f"line {n}" if n else ""

    def find(self, at: tuple[str, ...], key: str, index: int | None, is_table: bool) -> int | None:
        """1-based line of `key` in the table `at` (the index-th of an array of tables)."""
        current: tuple[str, ...] = ()
        seen = -1
        key_re = re.compile(rf"""(^|[{{,]\s*)\s*("{re.escape(key)}"|'{re.escape(key)}'|{re.escape(key)})\s*=""")
        for n, line in enumerate(self.lines, 1):
            code = self._code(line)
            header = self._header(code)
            if header:
                current, array = header
                if array and current == at:
                    seen += 1
                if is_table and current == at + (key,):
                    return n
                continue
            if current == at and (index is None or seen == index) and key_re.search(code):
                return n
        # a table written inline or with dotted keys: the first line naming it
        for n, line in enumerate(self.lines, 1):
            if key_re.search(line) or (is_table and re.search(rf"\b{re.escape(key)}\b", line)):
                return n
        return None


# ---- the parts with rules of their own ---------------------------------------------------------

def parse_rule(p: Path, text: str, i: int, r: dict) -> TeamRule:
    """One [[teams.rules]] entry; field is tag:<key>, namespace, account or service."""
    where = Locator(p, text).where(("teams", "rules"), "field", i)
    fld, pattern, team = r.get("field", ""), r.get("pattern"), r.get("team")
    if not (fld in RULE_FIELDS or (fld.startswith("tag:") and len(fld) > len("tag:"))) or not pattern or not team:
        raise InputError(p, f"[[teams.rules]] #{i + 1} is incomplete", "; ".join(x for x in (where, repr(r)) if x),
                         "Give field (tag:<key> | namespace | account | service), pattern and team")
    problem = re2_problem(pattern)
    if problem:
        raise InputError(p, f"[[teams.rules]] #{i + 1} pattern is not a regular expression DuckDB can run",
                         "; ".join(x for x in (where, f"{pattern}: {problem}") if x),
                         "Fix the pattern (RE2 syntax: no look-around, back-references or \\Z; use $ for the end)")
    team = typed_team(p, f"[[teams.rules]] #{i + 1} team", team)
    if fld.startswith("tag:"):
        return TeamRule("tag", fld[len("tag:"):], pattern, team)
    return TeamRule(fld, None, pattern, team)


def typed_team(p: Path, where: str, name: str) -> str:
    """A team named in the config, folded as a tag value is (core.text.team_name), so the team a
    namespace maps to and the team a tag names are one team when they print alike."""
    folded = team_name(name)
    if folded is None:
        raise InputError(p, "a team name has no visible character", f"{where} = {printable(name)!r}",
                         "Name the team with letters or digits")
    return folded


def re2_problem(pattern: str) -> str | None:
    """Why DuckDB's regex engine (RE2) refuses a pattern, else None. Rules run there
    (int_charges_teams.sql), and Python's re accepts what RE2 does not (look-ahead (?=, back-references
    \\1, \\Z), which would pass here and stop the report with a traceback."""
    with duckdb.connect() as con:
        try:
            con.execute("select regexp_matches('', ?)", [pattern]).fetchall()
        except duckdb.InvalidInputException as exc:
            return str(exc).removeprefix("Invalid Input Error: ")
    return None


def parse_allocation(p: Path, text: str, alloc: dict) -> dict[str, str]:
    """Categories and rules are checked by the schema; a weights rule needs weights."""
    rules = dict(DEFAULT_RULES)
    rules.update({k: v for k, v in alloc.items() if k in CATEGORIES})
    if "weights" in rules.values() and not alloc.get("weights"):
        raise InputError(p, "[allocation] uses the weights rule but has no weights",
                         Locator(p, text).where((), "allocation", None, True), "Add weights = { team = w, ... }")
    return rules


def parse_supplier(p: Path, text: str, i: int, e: dict) -> SupplierFactor:
    """One [[carbon.supplier_factors]] entry: a factor without its source and year cannot be audited."""
    missing = [k for k in ("zone", "g_per_kwh", "source", "year") if k not in e]
    if missing:
        raise InputError(p, f"[[carbon.supplier_factors]] #{i + 1} lacks {', '.join(missing)}",
                         Locator(p, text).where(("carbon", "supplier_factors"), next(iter(e), "zone"), i),
                         'Give zone, g_per_kwh, source (the supplier\'s disclosure) and year, e.g. '
                         'zone = "aws:us-east-1", g_per_kwh = 290, source = "Dominion Energy fuel mix 2025", year = 2025')
    return SupplierFactor(e["zone"], float(e["g_per_kwh"]), e["source"], int(e["year"]))


def parse_clusters(p: Path, text: str, entries: list[dict]) -> tuple[Cluster, ...]:
    """The [[clusters]] entries: a cluster needs its name and its GPU count (the capacity its cost
    pool is spread over); names are unique, since jobs and charges are keyed by them."""
    out: list[Cluster] = []
    for i, e in enumerate(entries):
        missing = [k for k in ("name", "gpus") if k not in e]
        if missing:
            raise InputError(p, f"[[clusters]] #{i + 1} lacks {', '.join(missing)}",
                             Locator(p, text).where(("clusters",), next(iter(e), "name"), i),
                             'Give at least name and gpus, e.g. name = "lab", gpus = 64, gpu_model = "H100-SXM5-80GB"')
        if any(c.name == e["name"] for c in out):
            raise InputError(p, f"[[clusters]] #{i + 1}: a second cluster named {e['name']!r}",
                             Locator(p, text).where(("clusters",), "name", i), "Give each cluster its own name")
        out.append(Cluster(name=e["name"], gpus=float(e["gpus"]), gpu_model=e.get("gpu_model"),
                           partitions=tuple(e.get("partitions", ())), hosts=tuple(e.get("hosts", ())),
                           capex_usd_per_gpu=optional_number(e, "capex_usd_per_gpu"),
                           lifetime_years=optional_number(e, "lifetime_years"),
                           electricity_usd_per_kwh=optional_number(e, "electricity_usd_per_kwh"),
                           ops_usd_per_gpu_month=optional_number(e, "ops_usd_per_gpu_month"), pue=optional_number(e, "pue")))
    return tuple(out)


def optional_number(entry: dict, key: str) -> float | None:
    return float(entry[key]) if key in entry else None


def parse_whatif(p: Path, text: str, whatif: dict) -> dict[str, float]:
    """[whatif] numbers; a utilization or a share is a fraction."""
    out = {k: float(v) for k, v in whatif.items() if k in finding_params(WHATIF_PREFIX)}
    for key in ("util_target", "spot_share"):
        if out.get(key, 0) > 1:
            raise InputError(p, f"[whatif] {key} = {out[key]:g}: expected a fraction, at most 1",
                             Locator(p, text).where(("whatif",), key), f"e.g. {key} = 0.8")
    return out


def parse_currency(p: Path, text: str, doc: dict) -> CurrencyConfig:
    """[currency]: codes upper-cased; the budget rule needs its rates, and each rate is above 0."""
    budget = {k.strip().upper(): float(v) for k, v in doc.get("budget_rates", {}).items()}
    where = Locator(p, text).where((), "currency", None, True)
    if doc.get("rate_rule") == "budget" and not budget:
        raise InputError(p, '[currency] rate_rule = "budget" but no budget rates', where,
                         'Add [currency.budget_rates] with one rate per billing currency, e.g. "EUR" = 1.08')
    zero = sorted(k for k, v in budget.items() if v <= 0)
    if zero:
        raise InputError(p, f"[currency.budget_rates] {', '.join(zero)}: a rate must be above 0", where,
                         "Give the reporting-currency units one unit of that currency buys")
    reporting = doc.get("reporting")
    return CurrencyConfig(reporting=reporting.strip().upper() if reporting else None,
                          rate_rule=doc.get("rate_rule", CurrencyConfig.rate_rule),
                          rounding=doc.get("rounding", CurrencyConfig.rounding), budget_rates=budget,
                          budget_source=doc.get("budget_source", CurrencyConfig.budget_source))


def parse_prometheus(doc: dict) -> PrometheusConfig:
    text = {k: doc[k] for k in ("url", "token_file", "user", "password_file", "ca_file") if k in doc}
    return PrometheusConfig(**text, headers=dict(doc.get("headers", {})),
                            max_points=int(doc["max_points"]) if "max_points" in doc else None,
                            max_samples=int(doc["max_samples"]) if "max_samples" in doc else None)
