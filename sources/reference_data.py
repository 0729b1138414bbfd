"""Reference data: coefficient and catalog CSVs under ``sources/reference/``.

Two entry points:

* ``load_reference(con)`` (re)creates the ``ref_*`` tables in a DuckDB connection, each
  coefficient table with a ``coefficient_id`` that estimates cite (e.g.
  ``gpu_specs:A100-SXM4-80GB:tdp_w``, ``grid_intensity:country:FR:2023:location``).
* small pure lookups for Python callers: ``resolve_gpu``, ``assumption``, ``grid_intensity``.

The files are read-only inputs; nothing here writes to disk. See ``reference/README.md`` for
what each file holds and where its figures come from.
"""

from __future__ import annotations

import csv
import hashlib
import re
from functools import lru_cache
from pathlib import Path

import duckdb

from core.sql import literal, table_comments

REFERENCE_DIR = Path(__file__).parent / "reference"

COEFFICIENT_FILES = ("gpu_specs", "grid_intensity", "pue", "embodied", "assumptions", "check_limits", "operators",
                     "convention_tdp", "capital_costs")
CATALOG_FILES = ("gpu_aliases", "instance_types", "operator_aliases", "conventions", "grid_zones", "instance_prices",
                 "mig_profiles")

# Every coefficient file ends with these columns, after its key columns.
COMMON_COLUMNS = ("value", "unit", "low", "high", "source", "retrieved", "notes")
NUMERIC_COMMON = ("value", "low", "high")

# Key columns per coefficient file, in coefficient_id order.
KEYS: dict[str, tuple[str, ...]] = {
    "gpu_specs": ("gpu_model", "metric"),
    "grid_intensity": ("zone_kind", "zone_id", "year", "basis"),
    "pue": ("provider", "region", "facility_type"),
    "embodied": ("item", "kind"),
    "assumptions": ("assumption_id",),
    "check_limits": ("limit_id",),
    "operators": ("operator", "year", "metric"),
    "convention_tdp": ("convention", "gpu_model"),
    "capital_costs": ("gpu_model", "server_type"),
}

# Full column lists of the catalog files; numeric columns are DOUBLE (gpu_count can be
# fractional: Azure NVads A10 v5 sizes get 1/6, 1/3 or 1/2 of a GPU).
CATALOG_COLUMNS: dict[str, tuple[str, ...]] = {
    "gpu_aliases": ("alias", "gpu_model", "source", "notes"),
    "instance_types": (
        "cloud", "instance_type", "gpu_model", "gpu_count", "vcpu", "memory_gib",
        "source", "retrieved", "notes",
    ),
    # where a meterbook zone's electricity comes from, in each data family's naming
    "grid_zones": ("zone", "grid_zone", "operator_code", "country", "source", "retrieved", "notes"),
    # list prices: a catalog (keyed by cloud, region, type), with a range like the coefficient files
    "instance_prices": (
        "cloud", "region", "instance_type", "pricing", "value", "unit", "low", "high", "source", "retrieved", "notes",
    ),
    "operator_aliases": ("alias", "operator", "home_zone", "source", "notes"),
    "conventions": ("convention", "power_basis", "pue_applied", "detect", "source", "notes"),
    # a MIG profile's share of its GPU: definitions of the hardware, per GPU model
    "mig_profiles": ("gpu_model", "profile", "compute_slices", "memory_slices", "max_compute_slices", "max_memory_slices",
                     "memory_gb", "source", "retrieved", "notes"),
}
CATALOG_NUMERIC = {"gpu_count", "vcpu", "memory_gib", "value", "low", "high", "compute_slices", "memory_slices",
                   "max_compute_slices", "max_memory_slices", "memory_gb"}

PROVIDERS = ("aws", "gcp", "azure")


def columns_of(name: str) -> tuple[str, ...]:
    """Expected header of reference file ``name`` (without ``.csv``)."""
    if name in KEYS:
        return KEYS[name] + COMMON_COLUMNS
    return CATALOG_COLUMNS[name]


def _is_numeric(name: str, column: str) -> bool:
    if name in KEYS:
        return column in NUMERIC_COMMON
    return column in CATALOG_NUMERIC


def _select_sql(name: str) -> str:
    """SELECT over read_csv with explicit types; empty VARCHAR cells stay ''."""
    cols = columns_of(name)
    types = ", ".join(
        f"'{c}': '{'DOUBLE' if _is_numeric(name, c) else 'VARCHAR'}'" for c in cols
    )
    path = literal(REFERENCE_DIR / f"{name}.csv")
    exprs = [c if _is_numeric(name, c) else f"coalesce({c}, '') AS {c}" for c in cols]
    if name in KEYS:
        # coefficient_id = '<file>:<key1>:<key2>...'; keys are never NULL after coalesce.
        parts = " || ':' || ".join(f"coalesce({k}, '')" for k in KEYS[name])
        exprs.append(f"'{name}:' || {parts} AS coefficient_id")
    return (
        f"SELECT {', '.join(exprs)} FROM read_csv({path}, header = true, delim = ',', "
        f"quote = '\"', escape = '\"', auto_detect = false, columns = {{{types}}})"
    )


def load_reference(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create ref_<file> tables for every reference CSV in ``con``. Every ingest and build
    calls this; a table made from the same file bytes and SQL (its comment holds their sha256) is
    kept rather than read and written again."""
    made = table_comments(con)
    for name in COEFFICIENT_FILES + CATALOG_FILES:
        sql = _select_sql(name)
        version = hashlib.sha256(sql.encode() + (REFERENCE_DIR / f"{name}.csv").read_bytes()).hexdigest()
        if made.get(f"ref_{name}") != version:
            con.execute(f"CREATE OR REPLACE TABLE ref_{name} AS {sql}")
            con.execute(f"COMMENT ON TABLE ref_{name} IS {literal(version)}")


# ---------------------------------------------------------------- pure lookups


@lru_cache(maxsize=None)
def read_rows(name: str) -> tuple[dict[str, str], ...]:
    """Rows of reference file ``name`` as dicts of strings (cached, read-only)."""
    with open(REFERENCE_DIR / f"{name}.csv", newline="", encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def coefficient_id(name: str, row: dict[str, str]) -> str:
    return ":".join([name, *(row[k] for k in KEYS[name])])


def _norm_gpu(name: str) -> str:
    # CodeCarbon writes "8 x NVIDIA H20"; drop the count, then ignore case and punctuation.
    name = re.sub(r"^\s*\d+\s*x\s+", "", name.strip(), flags=re.IGNORECASE)
    return re.sub(r"[^a-z0-9]", "", name.lower())


@lru_cache(maxsize=None)
def _gpu_index() -> dict[str, str]:
    index = {_norm_gpu(r["gpu_model"]): r["gpu_model"] for r in read_rows("gpu_specs")}
    for r in read_rows("gpu_aliases"):
        index.setdefault(_norm_gpu(r["alias"]), r["gpu_model"])
    return index


def resolve_gpu(name: str) -> str | None:
    """Canonical gpu_model for a GPU name as seen in the wild, or None.

    Matching ignores case, whitespace and punctuation and drops a leading "<n> x "
    (CodeCarbon). Canonical ids resolve to themselves.
    """
    if not name or not name.strip():
        return None
    return _gpu_index().get(_norm_gpu(name))


def _coefficient(name: str, row: dict[str, str]) -> dict:
    return {
        "value": float(row["value"]),
        "low": float(row["low"]),
        "high": float(row["high"]),
        "unit": row["unit"],
        "source": row["source"],
        "coefficient_id": coefficient_id(name, row),
    }


def assumption(assumption_id: str) -> dict:
    """Default used when a value is unknown: value/low/high/unit/source/coefficient_id."""
    for row in read_rows("assumptions"):
        if row["assumption_id"] == assumption_id:
            return _coefficient("assumptions", row)
    raise KeyError(f"unknown assumption_id {assumption_id!r} (see sources/reference/assumptions.csv)")


def _zone_candidates(zone: str) -> list[tuple[str, str]]:
    """(zone_kind, zone_id) pairs to try, in order, for a user-supplied zone string."""
    z = zone.strip()
    if z.lower() == "world":
        return [("world", "WORLD")]
    if ":" in z:
        provider, region = z.split(":", 1)
        return [("cloud_region", f"{provider.strip().lower()}:{_norm_region(region)}")]
    if re.fullmatch(r"[A-Za-z]{2}-[A-Za-z]{2}", z) and z[:2].upper() == "US":
        return [("us_state", z.upper())]
    if re.fullmatch(r"[A-Za-z]{2}", z):
        return [("country", z.upper())]
    # Bare region name: try each provider (us-east-1 is AWS, us-east1 GCP, eastus Azure).
    return [("cloud_region", f"{p}:{_norm_region(z)}") for p in PROVIDERS]


def _norm_region(region: str) -> str:
    # Azure display names ("East US 2") become ids ("eastus2"); others are lowercased.
    r = region.strip().lower()
    return r.replace(" ", "") if " " in r else r


@lru_cache(maxsize=None)
def _newest_location_rows() -> dict[tuple[str, str], dict[str, str]]:
    newest: dict[tuple[str, str], dict[str, str]] = {}
    for row in read_rows("grid_intensity"):
        if row["basis"] != "location":
            continue
        key = (row["zone_kind"], row["zone_id"])
        if key not in newest or int(row["year"]) > int(newest[key]["year"]):
            newest[key] = row
    return newest


# The location-based grid average a zone takes, most specific first, as the GHG Protocol Scope 2
# Guidance orders them (regional or subnational grid, then national, the world last): the same
# levels in the same order as int_zone_factors' coalesce, so a published location and a billed
# zone get the same factor. {level: what it is, in a report's words}.
GRID_LEVELS: dict[str, str] = {
    "zone": "the zone's own row (its cloud region, US state or country)",
    "grid zone": "else its grid zone's own row (a country or US state)",
    "country": "else its country's",
    "world": "else the world's",
}


def grid_intensity(zone: str) -> dict:
    """Newest location-based grid intensity for a zone, at the most specific of GRID_LEVELS
    grid_intensity.csv holds a row for.

    ``zone`` may be a country (``FR``), a US state (``US-CA``), an Electricity Maps grid zone
    (``DK-DK1``: its country is its prefix), a cloud region (``aws:us-east-1``, or bare
    ``us-east-1`` tried against aws, gcp, azure; its grid zone and country from grid_zones.csv)
    or ``world``. The result has value/low/high/unit/source/coefficient_id, the resolved
    zone_kind, zone_id and year, ``level`` (a key of GRID_LEVELS) and ``fallback`` (True when the
    world row stands in).
    """
    rows = _newest_location_rows()
    return next(_grid_result(rows[key], level) for level, key in _grid_keys(zone) if key in rows)


def _grid_keys(zone: str) -> list[tuple[str, tuple[str, str]]]:
    """(level, (zone_kind, zone_id)) to try, most specific first; the world's last."""
    own = _zone_candidates(zone)
    areas = _grid_areas()
    grids, countries = [], []
    for kind, zone_id in own:
        if kind != "cloud_region":
            grid_zone, country = zone_id, ""
        elif re.fullmatch(r"[A-Z]{2}-[A-Z0-9-]+", zone.strip()):
            # an Electricity Maps id ('DK-DK1', 'US-CAL-CISO'): upper case, where a region name is lower
            grid_zone, country = zone.strip(), ""
        else:
            grid_zone, country = areas.get(zone_id, ("", ""))
        grids += [(k, grid_zone.upper()) for k in ("country", "us_state") if grid_zone]
        if country := country or _country_prefix(grid_zone):
            countries.append(("country", country))
    return [*(("zone", k) for k in own), *(("grid zone", k) for k in grids), *(("country", k) for k in countries),
            ("world", ("world", "WORLD"))]


def _country_prefix(grid_zone: str) -> str:
    """An Electricity Maps zone id starts with its ISO 3166-1 alpha-2 country ('US-MIDA-PJM',
    'DK-DK1', 'DE'), as int_zone_factors reads it."""
    m = re.match(r"([A-Za-z]{2})(-|$)", grid_zone)
    return m.group(1).upper() if m else ""


@lru_cache(maxsize=None)
def _grid_areas() -> dict[str, tuple[str, str]]:
    """{cloud region: (its grid zone, its country)} from grid_zones.csv."""
    return {r["zone"]: (r["grid_zone"], r["country"]) for r in read_rows("grid_zones")}


def _grid_result(row: dict[str, str], level: str) -> dict:
    out = _coefficient("grid_intensity", row)
    out.update(
        zone_kind=row["zone_kind"],
        zone_id=row["zone_id"],
        year=int(row["year"]),
        basis=row["basis"],
        level=level,
        fallback=level == "world",
    )
    return out
