"""meterbook.toml: how a platform maps its tags, namespaces and hosts to teams.

Every key is optional; the defaults below apply when a key or the whole file is absent.
"""
from __future__ import annotations

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
[hosts]                                         # DCGM host label -> billing resource id
"ip-10-0-1-11" = "i-0a4d000000000001"
[telemetry]
interval_s = 30        # expected sampling interval
gap_multiple = 4       # a gap longer than interval_s x gap_multiple is a gap, not a sample
default_zone = "aws:us-east-1"   # grid zone for GPUs whose host maps to no billed resource
"""


@dataclass(frozen=True)
class Config:
    tag_keys: tuple[str, ...] = ("team", "cost-center", "project")
    unallocated: str = "unallocated"
    namespace_teams: dict[str, str] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)
    interval_s: float = 30.0
    gap_multiple: float = 4.0
    default_zone: str = ""
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
    return Config(
        tag_keys=tuple(teams.get("tag_keys", Config.tag_keys)),
        unallocated=teams.get("unallocated", Config.unallocated),
        namespace_teams=dict(teams.get("namespaces", {})),
        hosts=dict(doc.get("hosts", {})),
        interval_s=float(tel.get("interval_s", Config.interval_s)),
        gap_multiple=float(tel.get("gap_multiple", Config.gap_multiple)),
        default_zone=str(tel.get("default_zone", "")),
        path=str(p),
    )
