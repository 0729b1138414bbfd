"""meterbook.toml: how a platform maps its tags, namespaces, accounts and hosts to teams, and how
shared, idle and untagged spend is allocated.

Every key is optional; the defaults below apply when a key or the whole file is absent.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.errors import InputError

EXAMPLE = """\
[teams]
tag_keys = ["team", "cost-center", "project"]   # billing tag keys, first match wins
unallocated = "unallocated"
[teams.namespaces]                              # Kubernetes namespace -> team
llm-pretrain = "research"
[teams.accounts]                                # billing or sub account id -> team (after tags and rules)
"444455556666" = "vision"
[[teams.rules]]                                 # regex rules, in order, after tag keys
field = "tag:project"                           # tag:<key> | namespace | account | service
pattern = "^imagenet"                           # regexp, searched (anchor it with ^...$)
team = "vision"
[allocation]     # per category: proportional | even | weights | unallocated
idle = "proportional"            # GPU time with no workload, over the teams that used the node
untagged = "unallocated"         # a billed resource no team resolves for
shared_services = "proportional" # support, tax, network, storage with no resource and no team
commitment = "proportional"      # savings plan / reservation fees
credits = "proportional"         # credits and refunds that follow no identifiable charge
weights = { research = 3, search = 1 }
[hosts]                   # DCGM host label -> billing resource id; beats an instance_id label on the series
"ip-10-0-1-11" = "i-0a4d000000000001"
[telemetry]
interval_s = 30        # expected sampling interval
gap_multiple = 4       # a gap longer than interval_s x gap_multiple is a gap, not a sample
default_zone = "aws:us-east-1"   # grid zone for GPUs whose host maps to no billed resource
[carbon.market_intensity_g_per_kwh]   # contractual / residual-mix factor per zone (Scope 2 market-based)
"aws:us-east-1" = 379.0
[engine]         # where the build runs: duckdb (one machine) | spark (see README, "Beyond one machine")
name = "duckdb"
# master = "local[2]"                         # spark only; omit under spark-submit, Databricks or EMR
# warehouse = "s3://bucket/meterbook"         # spark only: the Parquet warehouse (default build/spark-warehouse)
# conf = { "spark.executor.memory" = "8g" }   # spark only: extra Spark settings
[findings]   # thresholds; absent keys use sources/reference/assumptions.csv
low_util_threshold = 0.5     # a GPU-hour below this mean utilization is underused
low_util_min_hours = 1       # ... and a GPU is reported when it has more such hours than this
material_share_of_gpu_cost = 0.05   # Spot/commitment/owned findings only for resources with this share
material_min_cost_usd = 100         # ... of the month's GPU spend and at least this cost
"""

RULES = ("proportional", "even", "weights", "unallocated")
CATEGORIES = ("idle", "untagged", "shared_services", "commitment", "credits")
DEFAULT_RULES = {"idle": "proportional", "untagged": "unallocated", "shared_services": "proportional",
                 "commitment": "proportional", "credits": "proportional"}
RULE_FIELDS = ("namespace", "account", "service")


@dataclass(frozen=True)
class TeamRule:
    field: str          # 'tag' | 'namespace' | 'account' | 'service'
    tag_key: str | None
    pattern: str
    team: str


ENGINES = ("duckdb", "spark")


@dataclass(frozen=True)
class EngineConfig:
    name: str = "duckdb"
    master: str | None = None        # Spark master; None: the launcher's (spark-submit), else local[2]
    warehouse: str | None = None     # Spark warehouse URI
    conf: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    tag_keys: tuple[str, ...] = ("team", "cost-center", "project")
    unallocated: str = "unallocated"
    namespace_teams: dict[str, str] = field(default_factory=dict)
    account_teams: dict[str, str] = field(default_factory=dict)
    team_rules: tuple[TeamRule, ...] = ()
    allocation: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_RULES))
    weights: dict[str, float] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)
    interval_s: float = 30.0
    gap_multiple: float = 4.0
    default_zone: str = ""
    market_intensity: dict[str, float] = field(default_factory=dict)
    findings: dict[str, float] = field(default_factory=dict)
    engine: EngineConfig = field(default_factory=EngineConfig)
    path: str | None = None


def load_config(path: str | Path | None) -> Config:
    """Read meterbook.toml; a missing path gives the defaults, a broken file an InputError."""
    if path is None:
        return Config()
    p = Path(path)
    if not p.exists():
        raise InputError(p, "config file not found", "", "Pass --config with the path of your meterbook.toml, or omit it to use the defaults")
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(p, "not valid TOML", str(exc), "Fix the syntax; see `meterbook --help` for an example") from None
    teams = doc.get("teams", {})
    tel = doc.get("telemetry", {})
    alloc = doc.get("allocation", {})
    return Config(
        tag_keys=tuple(teams.get("tag_keys", Config.tag_keys)),
        unallocated=teams.get("unallocated", Config.unallocated),
        namespace_teams=dict(teams.get("namespaces", {})),
        account_teams={str(k): str(v) for k, v in teams.get("accounts", {}).items()},
        team_rules=tuple(parse_rule(p, i, r) for i, r in enumerate(teams.get("rules", []))),
        allocation=parse_allocation(p, alloc),
        weights={str(k): float(v) for k, v in alloc.get("weights", {}).items()},
        hosts=dict(doc.get("hosts", {})),
        interval_s=float(tel.get("interval_s", Config.interval_s)),
        gap_multiple=float(tel.get("gap_multiple", Config.gap_multiple)),
        default_zone=str(tel.get("default_zone", "")),
        market_intensity={str(k): float(v) for k, v in doc.get("carbon", {}).get("market_intensity_g_per_kwh", {}).items()},
        findings={str(k): float(v) for k, v in doc.get("findings", {}).items()},
        engine=parse_engine(p, doc.get("engine", {})),
        path=str(p),
    )


def parse_engine(p: Path, eng: dict) -> EngineConfig:
    """[engine]: name (duckdb | spark), and for Spark its master, warehouse URI and settings."""
    name = str(eng.get("name", "duckdb"))
    if name not in ENGINES:
        raise InputError(p, f"[engine] name = {name!r} is not a known engine", f"engines: {', '.join(ENGINES)}",
                         'Use name = "duckdb" (one machine) or name = "spark"')
    return EngineConfig(name, eng.get("master"), eng.get("warehouse"), {str(k): str(v) for k, v in eng.get("conf", {}).items()})


def parse_rule(p: Path, i: int, r: dict) -> TeamRule:
    """One [[teams.rules]] entry; field is tag:<key>, namespace, account or service."""
    fld, pattern, team = str(r.get("field", "")), r.get("pattern"), r.get("team")
    if not (fld in RULE_FIELDS or (fld.startswith("tag:") and len(fld) > len("tag:"))) or not pattern or not team:
        raise InputError(p, f"[[teams.rules]] #{i + 1} is incomplete", repr(r),
                         "Give field (tag:<key> | namespace | account | service), pattern and team")
    try:
        re.compile(str(pattern))
    except re.error as exc:
        raise InputError(p, f"[[teams.rules]] #{i + 1} pattern is not a regular expression", f"{pattern!r}: {exc}",
                         "Fix the pattern (RE2 syntax: no look-around or back-references)") from None
    if fld.startswith("tag:"):
        return TeamRule("tag", fld[len("tag:"):], str(pattern), str(team))
    return TeamRule(fld, None, str(pattern), str(team))


def parse_allocation(p: Path, alloc: dict) -> dict[str, str]:
    rules = dict(DEFAULT_RULES)
    for cat, rule in alloc.items():
        if cat == "weights":
            continue
        if cat not in CATEGORIES or rule not in RULES:
            raise InputError(p, f"[allocation] {cat} = {rule!r} is not a known category and rule",
                             f"categories: {', '.join(CATEGORIES)}; rules: {', '.join(RULES)}",
                             "Use e.g. idle = \"proportional\"")
        rules[cat] = rule
    if "weights" in rules.values() and not alloc.get("weights"):
        raise InputError(p, "[allocation] uses the weights rule but has no weights", "",
                         "Add weights = { team = w, ... }")
    return rules
