"""Reference lookups of the reconstruction engine: which coefficient row a disclosure rests on.

Every function returns a coefficient dict (value, low, high, unit, source, coefficient_id) read
from sources/reference/*.csv; none holds a figure of its own. The choices, in order:

- PUE: the disclosure's own > its reporting convention (a calculator that applies none) > the
  cloud region or provider row (pue.csv) > the operator's published fleet PUE for the year
  (operators.csv) > the facility type (pue.csv) > the unknown-facility prior (operators.csv
  ``unknown``), which spans hyperscale fleets to legacy rooms and is flagged.
- Grid intensity: the disclosure's own > its location, else the operator's home zone
  (operator_aliases.csv), for the training year: that year's row, its range spanning the
  years a reporter could have used (grid factors are published one to two years late) >
  no year: the newest row with the widest range over recent years (flagged) > no location:
  the wide unknown-location range (flagged).
"""
from __future__ import annotations

import fnmatch
import hashlib
import re
from functools import lru_cache
from typing import Any, Mapping

from sources import reference_data as rd

# Years before the training year whose grid factor a reporter may have used (eGRID and the
# IEA publish one to two years after the data year), and after it (training spans new year).
GRID_YEARS_BEFORE, GRID_YEARS_AFTER = 2, 1
# Without a training year: the span of data years that "recent" covers.
RECENT_GRID_YEARS = 5


def row_coef(name: str, row: Mapping[str, str]) -> dict:
    return {"value": float(row["value"]), "low": float(row["low"]), "high": float(row["high"]),
            "unit": row.get("unit", ""), "source": row.get("source", ""), "year": row.get("year") or None,
            "coefficient_id": rd.coefficient_id(name, dict(row))}


@lru_cache(maxsize=None)
def assumption(assumption_id: str) -> dict:
    return rd.assumption(assumption_id)


@lru_cache(maxsize=4096)
def resolve_gpu(name: str) -> str | None:
    return rd.resolve_gpu(name)


@lru_cache(maxsize=None)
def specs() -> dict[tuple[str, str], dict]:
    return {(r["gpu_model"], r["metric"]): row_coef("gpu_specs", r) for r in rd.read_rows("gpu_specs")}


@lru_cache(maxsize=None)
def embodied_rows() -> dict[tuple[str, str], dict]:
    return {(r["item"], r["kind"]): row_coef("embodied", r) for r in rd.read_rows("embodied")}


# The engine's own coefficient files (not loaded into the warehouse): file -> key columns.
ENGINE_FILES = {"workload_power": ("workload",), "site_grid": ("site", "year"),
                "accelerator_system_power": ("gpu_model",), "convention_grid": ("convention", "zone"),
                "market_instruments": ("operator", "year", "instrument")}


def engine_coef(name: str, row: Mapping[str, str]) -> dict:
    """A row of one of the engine's own files as a coefficient, its id '<file>:<key>...'."""
    return {**row_coef("assumptions", {**row, "assumption_id": ""}),
            "coefficient_id": ":".join([name, *(row[k] for k in ENGINE_FILES[name])])}


@lru_cache(maxsize=None)
def coefficients_by_id() -> dict[str, dict]:
    """Every reference coefficient with a range, by coefficient id (as the warehouse's ref_* tables
    and the assumption ids of its rows name them)."""
    shared = {c["coefficient_id"]: c for name in ("gpu_specs", "assumptions", "pue", "grid_intensity", "embodied",
                                                  "operators", "convention_tdp")
              for c in (row_coef(name, r) for r in rd.read_rows(name))}
    return {**shared, **{c["coefficient_id"]: c for name in ENGINE_FILES
                         for c in (engine_coef(name, r) for r in rd.read_rows(name))}}


def _word(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


@lru_cache(maxsize=64)
def power_fraction(workload: str | None, accelerator_count: float | None, measured: bool) -> tuple[dict, str]:
    """(board power as a fraction of TDP, why).

    The kind of work selects a row of workload_power.csv ('pretraining', 'Fine-tuning' and
    'fine_tuning' all match); a job on one server with no workload stated gets the one-server row;
    otherwise the large-run default. Those rows describe metered power, so they stand as they are
    only where the figure was metered (``measured``: power_basis or the convention says so). Where
    nobody says how the figure was obtained it may equally be a TDP x hours estimate, as most
    published figures are: the range then spans both readings, central on the large-run default."""
    default = assumption("gpu_power_fraction_of_tdp")
    rows = rd.read_rows("workload_power")
    row, why = None, ""
    if workload:
        row = next((r for r in rows if r["max_accelerators"] == "" and _word(r["workload"]) == _word(workload)), None)
        why = f"the stated workload ({row['workload']})" if row else ""
    if row is None and not workload and accelerator_count is not None:
        row = next((r for r in rows if r["max_accelerators"] and accelerator_count <= float(r["max_accelerators"])), None)
        why = f"{accelerator_count:g} accelerators and no workload stated: fine-tuning, inference or training"
    if row is None:
        return default, "no workload stated: a large training run"
    c = engine_coef("workload_power", row)
    if measured:
        return c, why
    return ({**c, "value": default["value"], "low": min(c["low"], default["low"]), "high": max(c["high"], default["high"]),
             "coefficient_id": c["coefficient_id"] + ":basis_not_stated",
             "source": f"{c['source']}; and, for a TDP x hours estimate, {default['source']}"},
            why + "; metered or TDP-priced, not stated: the range spans both")


@lru_cache(maxsize=None)
def check_limits() -> dict[str, dict]:
    """Check limits (not coefficients) from sources/reference/check_limits.csv, by limit_id."""
    return {r["limit_id"]: {"value": float(r["value"]), "id": f"check_limits:{r['limit_id']}", "source": r["source"]}
            for r in rd.read_rows("check_limits")}


@lru_cache(maxsize=None)
def reference_sha256() -> str:
    """One hash over every reference file, so a JSON result names the data version it used."""
    h = hashlib.sha256()
    for path in sorted(rd.REFERENCE_DIR.glob("*.csv")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------- operators and conventions


@lru_cache(maxsize=None)
def _aliases() -> tuple[tuple[re.Pattern, str, str], ...]:
    return tuple((re.compile(rf"(?<![a-z0-9]){re.escape(r['alias'].lower())}(?![a-z0-9])"), r["operator"], r["home_zone"])
                 for r in rd.read_rows("operator_aliases"))


@lru_cache(maxsize=None)
def operators() -> tuple[str, ...]:
    """Operators a disclosure may name: those with an alias or a published-figure row."""
    return tuple(sorted({r["operator"] for r in rd.read_rows("operator_aliases")}))


@lru_cache(maxsize=4096)
def operator_from_text(text: str | None) -> str | None:
    """The operator a source names, when exactly one operator's aliases occur in it."""
    found = {op for rx, op, _ in _aliases() if rx.search((text or "").lower())}
    return found.pop() if len(found) == 1 else None


@lru_cache(maxsize=None)
def home_zone(operator: str) -> str | None:
    return next((z for _, op, z in _aliases() if op == operator and z), None)


@lru_cache(maxsize=None)
def conventions() -> dict[str, dict]:
    return {r["convention"]: r for r in rd.read_rows("conventions")}


@lru_cache(maxsize=None)
def convention_tdp(convention: str | None, gpu: str | None) -> dict | None:
    """The TDP a reporting tool uses for a part (the ML CO2 Impact calculator's own table), when
    it lists the part: a figure computed with the tool rests on it, not on the datasheet."""
    row = next((r for r in rd.read_rows("convention_tdp") if r["convention"] == convention and r["gpu_model"] == gpu), None)
    return row_coef("convention_tdp", row) if row else None


@lru_cache(maxsize=4096)
def convention_grid(convention: str | None, location: str | None) -> tuple[dict, tuple[str, ...]] | None:
    """(grid factor, the regions it covers) a reporting tool prices a cloud region at, from its
    own table (convention_grid.csv: the ML CO2 Impact calculator's factor as it applies it).

    A region named by its geography only ('aws:us-east', as a card's 'US-east' reads) matches
    every region of the tool's table with that name and a number after it (us-east-1 and
    us-east-2): nothing tells which the reporter picked, so the range spans them all, its centre
    their mean."""
    if not convention or not location or ":" not in location:
        return None
    loc = location.strip().lower()
    rows = [r for r in rd.read_rows("convention_grid") if r["convention"] == convention]
    hits = [r for r in rows if r["zone"] == loc] or \
        [r for r in rows if r["zone"].startswith(loc) and re.match(r"[-0-9]", r["zone"][len(loc):] or "")]
    if not hits:
        return None
    coefs = [engine_coef("convention_grid", r) for r in hits]
    if len(coefs) == 1:
        return coefs[0], (hits[0]["zone"],)
    zones = tuple(r["zone"] for r in hits)
    return ({**coefs[0], "value": sum(c["value"] for c in coefs) / len(coefs),
             "low": min(c["low"] for c in coefs), "high": max(c["high"] for c in coefs),
             "coefficient_id": f"convention_grid:{convention}:{loc}:any",
             "source": "; ".join(c["source"] for c in coefs)}, zones)


def _operator_row(operator: str, metric: str, year: int | None) -> dict | None:
    """The operator's row for the year: the latest row at or before it (a figure holds until
    the operator publishes another), else the earliest; no year: the newest."""
    rows = [r for r in rd.read_rows("operators") if r["operator"] == operator and r["metric"] == metric]
    if not rows:
        return None
    dated = sorted(rows, key=lambda r: int(r["year"] or 0))
    if year is None:
        return row_coef("operators", dated[-1])
    before = [r for r in dated if int(r["year"] or 0) <= year]
    return row_coef("operators", (before or dated)[-1])


# ---------------------------------------------------------------- PUE


@lru_cache(maxsize=4096)
def resolve_pue(location: str | None, facility_type: str | None, operator: str | None = None,
                year: int | None = None) -> tuple[dict, str | None]:
    """(coefficient, flag): flag names a fallback the output must state (None for a real row)."""
    rows = rd.read_rows("pue")
    if location and ":" in location:
        provider, region = (p.strip().lower() for p in location.split(":", 1))
        for match in (lambda r: r["region"] == region,
                      lambda r: "*" in r["region"] and fnmatch.fnmatch(region, r["region"]),
                      lambda r: r["region"] == ""):
            hits = [r for r in rows if r["provider"] == provider and match(r)]
            if hits:
                return row_coef("pue", hits[0]), None
    if operator:
        row = _operator_row(operator, "pue", year)
        if row is not None:
            return row, None
    if facility_type and facility_type != "unknown":
        row = next(r for r in rows if r["provider"] == "" and r["region"] == "" and r["facility_type"] == facility_type)
        return row_coef("pue", row), None
    return unknown_pue(year), "pue_unknown"


def unknown_pue(year: int | None) -> dict:
    """The PUE of a facility nothing is known of: the average of the run's year (a dated row holds
    until the next; before the first, the first), the undated current row when the year is not
    known. Facilities grew more efficient as hyperscale fleets took most servers, so a 2019 run
    priced on today's average would come out low."""
    rows = [r for r in rd.read_rows("operators") if r["operator"] == "unknown" and r["metric"] == "pue"]
    current = next((r for r in rows if not r["year"]), None)
    assert current is not None, "operators.csv lacks the undated 'unknown' PUE row"
    dated = sorted((r for r in rows if r["year"]), key=lambda r: int(r["year"]))
    if year is None or not dated:
        return row_coef("operators", current)
    before = [r for r in dated if int(r["year"]) <= year]
    return row_coef("operators", (before or dated)[-1])


def market_factor(operator: str | None, year: int | None) -> dict | None:
    """An operator's own published market-based factor for the year (Meta: 0 from 2020)."""
    if not operator:
        return None
    row = _operator_row(operator, "market_gco2e_per_kwh", year)
    if row is None or (year is not None and year < int(row["year"])):
        return None
    return row


def market_instrument(operator: str | None, year: int | None) -> dict | None:
    """The fraction of location-based emissions an operator's contractual instrument leaves
    (1 - its share, market_instruments.csv) for the year: the latest row at or before it, the newest
    without a year; none before the operator's first published year."""
    rows = sorted((r for r in rd.read_rows("market_instruments") if operator and r["operator"] == operator),
                  key=lambda r: int(r["year"]))
    dated = [r for r in rows if year is None or int(r["year"]) <= year]
    if not dated:
        return None
    share = engine_coef("market_instruments", dated[-1])
    return {**share, "value": 1.0 - share["value"], "low": 1.0 - share["high"], "high": 1.0 - share["low"],
            "unit": "ratio", "instrument": dated[-1]["instrument"], "share": share}


# ---------------------------------------------------------------- grid intensity


@lru_cache(maxsize=None)
def _zone_rows() -> dict[tuple[str, str], list[dict[str, str]]]:
    out: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in rd.read_rows("grid_intensity"):
        if r["basis"] == "location":
            out.setdefault((r["zone_kind"], r["zone_id"]), []).append(r)
    for rows in out.values():
        rows.sort(key=lambda r: int(r["year"]))
    return out


@lru_cache(maxsize=4096)
def resolve_grid(location: str | None, year: int | None = None) -> tuple[dict, str | None]:
    """(coefficient, flag) for a location and training year; flag is ``location_fallback``,
    ``year_unknown`` or ``year_not_in_data`` when the result is a stand-in the output must state."""
    if not location:
        return assumption("grid_intensity_unknown_location"), "location_fallback"
    g = rd.grid_intensity(location)
    if g["fallback"]:
        return assumption("grid_intensity_unknown_location"), "location_fallback"
    rows = _zone_rows()[(g["zone_kind"], g["zone_id"])]
    # level: which of rd.GRID_LEVELS stood in (a zone without a row of its own takes its grid
    # zone's or its country's), for the reconstruction to say so
    if year is None:
        newest = int(rows[-1]["year"])
        recent = [r for r in rows if int(r["year"]) > newest - RECENT_GRID_YEARS]
        out = row_coef("grid_intensity", rows[-1]) | {"level": g["level"]}
        out.update(low=min(float(r["low"]) for r in recent), high=max(float(r["high"]) for r in recent))
        return out, "year_unknown"
    exact = next((r for r in rows if int(r["year"]) == year), None)
    row = exact or min(rows, key=lambda r: (abs(int(r["year"]) - year), -int(r["year"])))
    out = row_coef("grid_intensity", row) | {"level": g["level"]}
    # The row's band states the spread between sources and methods for its year (CO2 or CO2e,
    # generation or life cycle); a reporter may also have used the factor of an adjacent year.
    # Both are real, so the range covers both: never narrower than the row's own band.
    window = [r for r in rows if year - GRID_YEARS_BEFORE <= int(r["year"]) <= year + GRID_YEARS_AFTER and r is not row]
    if window:
        out.update(low=min(out["low"], *(float(r["value"]) for r in window)),
                   high=max(out["high"], *(float(r["value"]) for r in window)))
        years = sorted({int(r["year"]) for r in window})
        out["source"] += f" [range widened to the {', '.join(map(str, years))} factors a {year} reporter may have used]"
    return out, None if exact is not None else "year_not_in_data"


@lru_cache(maxsize=None)
def system_power(gpu: str | None) -> dict | None:
    """Average system power per accelerator, its share of host, network and fans included
    (accelerator_system_power.csv), when the part has a row."""
    row = next((r for r in rd.read_rows("accelerator_system_power") if r["gpu_model"] == gpu), None)
    return engine_coef("accelerator_system_power", row) if row else None


@lru_cache(maxsize=64)
def operator_power_basis(operator: str | None, accelerator: str | None) -> str | None:
    """The power basis an operator's own published footprints use for a kind of accelerator
    (operator_power_convention.csv): Meta prices at TDP, Google reports TPU system power."""
    return next((r["power_basis"] for r in rd.read_rows("operator_power_convention")
                 if operator and r["operator"] == operator
                 and (not r["accelerator_pattern"] or r["accelerator_pattern"] in (accelerator or "").lower())), None)


@lru_cache(maxsize=None)
def _site_aliases() -> tuple[tuple[re.Pattern, str, str], ...]:
    return tuple({(rx.pattern, site, zone): (rx, site, zone) for rx, site, zone in (
        (re.compile(rf"(?<![a-z0-9]){re.escape(a)}(?![a-z0-9])"), r["site"], r["zone"])
        for r in rd.read_rows("site_grid") for a in r["aliases"].split("|"))}.values())


@lru_cache(maxsize=4096)
def site_named(text: str | None) -> tuple[str, str] | None:
    """(site, its grid zone) when the text names exactly one site of site_grid.csv (a data centre
    an operator publishes its own grid factor for: 'Google Taiwan datacenter')."""
    found = {(site, zone) for rx, site, zone in _site_aliases() if rx.search((text or "").lower())}
    return found.pop() if len(found) == 1 else None


@lru_cache(maxsize=4096)
def resolve_site_grid(site: str, year: int | None) -> dict:
    """The site's own grid factor for the year (nearest year when absent), its range covering the
    factors of the years a reporter may have used, as ``resolve_grid`` does for a zone."""
    rows = sorted((r for r in rd.read_rows("site_grid") if r["site"] == site), key=lambda r: int(r["year"]))
    if year is None:
        row, window = rows[-1], rows[-RECENT_GRID_YEARS:]
    else:
        row = min(rows, key=lambda r: (abs(int(r["year"]) - year), -int(r["year"])))
        window = [r for r in rows if year - GRID_YEARS_BEFORE <= int(r["year"]) <= year + GRID_YEARS_AFTER]
    out = engine_coef("site_grid", row)
    out.update(low=min(out["low"], *(float(r["value"]) for r in window)),
               high=max(out["high"], *(float(r["value"]) for r in window)))
    return out


def cited(c: Mapping[str, Any]) -> str:
    """A coefficient's source as a method line cites it: the publication, without the quote."""
    return re.split(r": '|; ", c.get("source") or "", maxsplit=1)[0].strip()


def describe(c: Mapping[str, Any]) -> dict:
    """An assumption as the output lists it: id, value, low, high, unit, source."""
    return {"id": c["coefficient_id"], "value": c["value"], "low": c["low"], "high": c["high"],
            "unit": c.get("unit", ""), "source": c.get("source", "")}
