"""CodeCarbon `emissions.csv` (every release, 12 to 38 columns, and the hand-edited variants).

Parsed by column name, never by a version table: the 2021 example layouts match no release,
columns get reordered, `.bak` headers are padded with spaces, old examples carry a BOM, a
leading unnamed pandas index column or 14 empty trailing header fields. A file can also hold
several header lines when emission files were concatenated; each part is then read with its
own header (the runner sees one file, one row count).

The `timestamp` column is naive LOCAL time at the END of the run. It is read in the zone given
by options["timezone"], else the zone of the run's region where the table knows it (US states,
Canadian provinces: sources/region_timezones.csv; "washington" is Pacific time, not New York's),
else the zone of its country (sources/country_timezones.csv), else taken as UTC; each row says
which (`timezone_basis`).

In its default append mode CodeCarbon writes a run's running totals again at every flush, under
one run_id. Every row loads; `run_key` names the run a row is a snapshot of, and the run_month
mart (and the file's totals here) count each run once, by its last snapshot, across files.
Values no host can produce (non-finite, more power than the declared hardware draws, text under a
blank header name) are rejects; parts that do not add up are row findings (stg_codecarbon__runs.sql).
"""
from __future__ import annotations

import csv
import gzip
import io
import zoneinfo
from pathlib import Path
from typing import Any

import duckdb

from core.errors import InputError
from core.sql import literal, one_row, read_sql
from schemas.contract import reject_sql
from sources.base import Head, Reader, Staged, duck_error, gzip_ok, register
from sources.linecount import LineCount
from sources.reference_data import resolve_gpu
from sources.tabular import stage_sql, tabular_expected_rows

COUNTRY_TIMEZONES = Path(__file__).parent / "country_timezones.csv"
REGION_TIMEZONES = Path(__file__).parent / "region_timezones.csv"

# Canonical staging name -> header spellings (lower-cased, stripped), preferred first.
ALIASES: dict[str, tuple[str, ...]] = {
    "timestamp": ("timestamp",),
    "project_name": ("project_name",),
    "run_id": ("run_id",),
    # The 2021-09 official example calls the project column experiment_name; it names an
    # experiment, as experiment_id does from v2.7.0 on.
    "experiment": ("experiment_id", "experiment_name"),
    "duration": ("duration",),
    "emissions": ("emissions",),
    "emissions_rate": ("emissions_rate",),
    "cpu_power": ("cpu_power",),
    "gpu_power": ("gpu_power",),
    "ram_power": ("ram_power",),
    "cpu_energy": ("cpu_energy",),
    "gpu_energy": ("gpu_energy",),
    "ram_energy": ("ram_energy",),
    "energy_consumed": ("energy_consumed",),
    "country_name": ("country_name", "country"),
    "country_iso_code": ("country_iso_code",),
    "region": ("region",),
    "cloud_provider": ("cloud_provider",),
    "cloud_region": ("cloud_region",),
    "gpu_count": ("gpu_count",),
    "gpu_model": ("gpu_model",),
    "cpu_model": ("cpu_model",),
    "pue": ("pue",),
    "codecarbon_version": ("codecarbon_version",),
    "tracking_mode": ("tracking_mode",),
}
REQUIRED = ("timestamp", "duration", "emissions", "energy_consumed")
# Any one of these beside timestamp + duration + emissions marks a CodeCarbon header.
SNIFF_ANY = {"energy_consumed", "project_name", "experiment_id", "experiment_name", "run_id"}
# Never occurs in a text CSV, so empty cells stay '' and only missing cells (short rows) are NULL.
NO_NULL = "\x00"


def header_names(columns: tuple[str, ...] | list[str]) -> list[str]:
    return [c.strip().lower() for c in columns]


def is_header(names: list[str]) -> bool:
    return {"timestamp", "duration", "emissions"} <= set(names)


@register
class CodeCarbonReader(Reader):
    kind = "codecarbon"
    table = "runs"
    description = "CodeCarbon emissions.csv (v0.0.9 to v3.x, any column order, .bak files)"

    def sniff(self, head: Head) -> str | None:
        if head.parquet:
            return None
        names = header_names(head.columns)
        if not is_header(names) or not SNIFF_ANY & set(names):
            return None
        return layout_label(names)

    def stage(self, con: duckdb.DuckDBPyConnection, head: Head, options: dict[str, Any]) -> Staged:
        tz = timezone_literal(head.path, options)   # a bad --timezone stops before any read
        headers = header_lines(head)
        for names in headers:
            missing = [c for c in REQUIRED if not any(a in names for a in ALIASES[c])]
            if missing:
                raise InputError(head.path, f"missing required column{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                                 "header" if names is headers[0] else "a later header line",
                                 "Export emissions.csv from CodeCarbon again, or pass the right --kind")
        raw_view(con, head, headers)
        country_zones(con)
        rows_read = one_row(con, "select count(*) from raw_codecarbon")[0]
        gpu_map(con, "select distinct trim(gpu_model) from raw_codecarbon where trim(gpu_model) <> ''")
        stage_sql(con, head.path, "stg_codecarbon__runs.sql", {"timezone": tz})
        from schemas.runs import Runs  # pandera and pandas: imported when a file is staged
        sql = reject_sql(Runs, {r[0] for r in con.execute("describe _staged").fetchall()})
        if sql:
            con.execute(sql)
        versions = [r[0] for r in con.execute(
            "select distinct codecarbon_version from _staged where codecarbon_version is not null order by 1").fetchall()]
        label = layout_label(headers[0]) + (f"; codecarbon {', '.join(versions)}" if versions else "")
        return Staged(rows_read=rows_read, format_version=label,
                      notes=timezone_notes(con, len(headers)) + snapshot_notes(con), header_records=len(headers))

    def dialect(self, head: Head) -> str | None:
        return "csv"

    def expected_rows(self, con: duckdb.DuckDBPyConnection, head: Head, count: LineCount | None, staged: Staged) -> int | None:
        return tabular_expected_rows(con, head, count, staged.header_records)

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        """The runs this file counts, as the run_month mart counts them over the whole warehouse:
        a run's last snapshot, once, wherever it was loaded first (a copy of a loaded file adds
        none). `snapshot_rows`: loaded rows that are earlier snapshots or copies of a run."""
        n, kwh, kg = one_row(con, f"""select count(*), sum(energy_kwh), sum(emissions_kg)
                                      from ({read_sql('30_marts', 'run_month.sql')}) where file_id = ?""", [file_id])
        rows = one_row(con, "select count(*) from runs where file_id = ?", [file_id])[0]
        return {"runs": n, "energy_kwh": float(kwh or 0), "emissions_kg": float(kg or 0), "snapshot_rows": rows - n}


def layout_label(names: list[str]) -> str:
    return f"{sum(1 for n in names if n)}-column layout"


def header_lines(head: Head) -> list[list[str]]:
    """Every header line in the file, first one first (more than one when files were concatenated).

    A line scan, not a parse: only lines naming timestamp, duration and emissions are parsed.
    """
    if head.gzip:
        gzip_ok(head.path)
    opener = gzip.open if head.gzip else open
    found: list[list[str]] = []
    with opener(head.path, "rt", encoding="utf-8-sig", errors="replace", newline="") as fh:
        for line in fh:
            low = line.lower()
            if "timestamp" in low and "duration" in low and "emissions" in low:
                names = header_names(next(csv.reader(io.StringIO(line)), []))
                if is_header(names):
                    found.append(names)
    if not found or found[0] != header_names(head.columns):
        raise InputError(head.path, "no CodeCarbon header on the first line", "line 1",
                         "Remove the lines above the header, or pass the right --kind")
    return found


def raw_view(con: duckdb.DuckDBPyConnection, head: Head, headers: list[list[str]]) -> None:
    """Temp table raw_codecarbon: canonical text columns, row_number, and the row's field count check.

    Every cell is read as text; the file is read as wide as its widest header plus one column
    so that a short row (NULL-padded) or a long row (text in the extra column) shows itself.
    """
    width = max(len(h) for h in headers)
    cols = [f"c{i}" for i in range(width + 1)]
    spec = ", ".join(f"'{c}': 'varchar'" for c in cols)
    read = (f"select row_number() over () as _rec, * from read_csv(?, header = false, skip = 1, auto_detect = false, "
            f"delim = ',', quote = '\"', escape = '\"', comment = '', null_padding = true, strict_mode = false, "
            f"nullstr = ['{NO_NULL}'], columns = {{{spec}}})")

    def any_cell(value: str) -> str:
        # coalesce: a NULL (padded) cell must not make the whole test NULL
        return "coalesce(" + " or ".join(f"lower(trim({c})) = '{value}'" for c in cols) + ", false)"

    def by_segment(idx: list[int | None]) -> str:
        whens = " ".join(f"when {k} then c{i}" for k, i in enumerate(idx) if i is not None)
        return f"case _seg {whens} end" if whens else "null::varchar"

    def by_segment_any(exprs: list[list[str]], typ: str) -> str:
        whens = " ".join(f"when {k} then coalesce({', '.join(e)})" for k, e in enumerate(exprs) if e)
        return f"case _seg {whens} end" if whens else f"null::{typ}"

    select = []
    for name, alts in ALIASES.items():
        idx = [next((h.index(a) for a in alts if a in h), None) for h in headers]
        select.append(f"{by_segment(idx)} as {name}")
    expected = "case _seg " + " ".join(f"when {k} then {len(h)}" for k, h in enumerate(headers)) + " end"
    # Cells under a blank header name (trailing empty names, or one in the middle): empty in a
    # file as CodeCarbon wrote it; text there is a record run into this one. A blank first name
    # is pandas' index column, whose numbers are no data of the run.
    blank = [[i for i, n in enumerate(h) if not n and i > 0] for h in headers]
    blank_at = by_segment_any([[f"case when trim(c{i}) <> '' then {i + 1} end" for i in b] for b in blank], "int")
    blank_value = by_segment_any([[f"nullif(trim(c{i}), '')" for i in b] for b in blank], "varchar")
    fields = f"len(list_filter([{', '.join(cols)}], lambda x: x is not null))"
    sql = f"""
        create or replace temp table raw_codecarbon as
        with cells as ({read}),
        marked as (
            select *, {any_cell('timestamp')} and {any_cell('duration')} and {any_cell('emissions')} as _is_header
            from cells
        ),
        segmented as (
            select *, sum(_is_header::int) over (order by _rec rows unbounded preceding) as _seg from marked
        )
        select _rec as row_number, {', '.join(select)},
            {fields} as _fields, {expected} as _expected_fields, {len(cols)} as _read_width,
            {blank_at} as _blank_at, {blank_value} as _blank_value
        from segmented
        where not _is_header
    """
    try:
        con.execute(sql, [str(head.path)])
    except duckdb.Error as exc:
        raise duck_error(head.path, exc) from None


def country_zones(con: duckdb.DuckDBPyConnection) -> None:
    """Temp tables _country_zones (one row per lookup key: ISO3, ISO2, lower-cased names) and
    _region_zones (country ISO3 x lower-cased region name or abbreviation)."""
    con.execute("""
        create or replace temp table _country_zones as
        with src as (select * from read_csv(?, header = true, all_varchar = true)),
        keys as (
            select iso3 as key, iso3, timezone, zones_in_country from src
            union all select iso2, iso3, timezone, zones_in_country from src
            union all select lower(country_name), iso3, timezone, zones_in_country from src
            union all select lower(trim(unnest(string_split(other_names, ';')))), iso3, timezone, zones_in_country
                      from src where other_names is not null
        )
        select key, any_value(iso3) as iso3, any_value(timezone) as timezone, any_value(zones_in_country)::int as zones_in_country
        from keys where key is not null and key <> '' group by key
    """, [str(COUNTRY_TIMEZONES)])
    # Regions of a country (CodeCarbon writes the state or province name, lower-cased), by name
    # and by postal abbreviation, keyed with the country's ISO3 code.
    con.execute("""
        create or replace temp table _region_zones as
        with src as (select * from read_csv(?, header = true, all_varchar = true))
        select iso3, lower(region) as key, timezone, zones_in_region::int as zones_in_region from src
        union all
        select iso3, lower(abbreviation), timezone, zones_in_region::int from src where abbreviation <> ''
    """, [str(REGION_TIMEZONES)])


def timezone_literal(path: Path, options: dict[str, Any]) -> str:
    """The --timezone option as an SQL literal (NULL when not given), checked against the tz database."""
    tz = options.get("timezone")
    if not tz:
        return "null"
    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InputError(path, f"unknown time zone {tz!r}", "--timezone",
                         "Pass an IANA zone such as Europe/Paris, or leave it out to use each run's country") from None
    return literal(tz)


def gpu_map(con: duckdb.DuckDBPyConnection, names_sql: str) -> None:
    """Temp table _gpu_map: each distinct GPU name `names_sql` selects -> canonical id from the
    alias catalog, resolved once per name, not per row."""
    raws = [r[0] for r in con.execute(names_sql).fetchall()]
    con.execute("create or replace temp table _gpu_map (raw varchar, model varchar)")
    if raws:
        con.executemany("insert into _gpu_map values (?, ?)", [(r, resolve_gpu(r)) for r in raws])


def resolve_gpu_models(con: duckdb.DuckDBPyConnection) -> None:
    """Canonical gpu_model of _staged's gpu_model_raw (work logs; CodeCarbon's staging joins _gpu_map itself)."""
    gpu_map(con, "select distinct gpu_model_raw from _staged where gpu_model_raw is not null")
    con.execute("""create or replace temp table _staged as
                   select s.* replace (m.model as gpu_model) from _staged s left join _gpu_map m on m.raw = s.gpu_model_raw""")


def snapshot_notes(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Rows that are earlier snapshots of a run in this file (CodeCarbon's default append mode
    writes the running totals again at every flush): loaded, and counted once, by their last."""
    rows, runs = one_row(con, """select count(*), count(distinct run_key) from _staged
                                 anti join (select distinct row_number from _rejects) r using (row_number)""")
    if rows == runs:
        return []
    return [f"{rows - runs} rows are earlier snapshots of a run (CodeCarbon appends running totals): "
            f"{rows} rows loaded, {runs} runs, each counted by its last snapshot"]


def timezone_notes(con: duckdb.DuckDBPyConnection, n_headers: int) -> list[str]:
    """What the reader assumed, said once per file (a fallback is a flagged row and a note)."""
    notes = []
    if n_headers > 1:
        notes.append(f"{n_headers} header lines (files concatenated); each part read with its own header")
    for basis, tz, n in con.execute("""select timezone_basis, timezone, count(*) from _staged
                                       where timezone_basis in ('country_multizone', 'region_multizone', 'assumed_utc')
                                       group by all order by all""").fetchall():
        why = {"country_multizone": "country has several zones, and no region the table knows",
               "region_multizone": "region has several zones"}.get(basis, "no country or --timezone")
        notes.append(f"{n} runs: local timestamps read as {tz} ({why})")
    return notes
