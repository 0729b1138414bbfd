"""What every telemetry reader shares: its staging model yields `_tel_groups` (metric x label set
x UTC hour aggregates, one pass over the file); labels are parsed once per distinct set, then
one SQL model folds groups into GPU-hour parts and workload parts. Rejected lines are counted
per group and, only when there are some, located line by line by the reader."""
from __future__ import annotations

from importlib.resources import files
from typing import Any

import duckdb

from core.sql import fill, literal, one_row, read_sql
from sources.base import BatchMiss, Head, Reader, Restage, duck_error
from sources.reference_data import REFERENCE_DIR, read_rows
from sources.tabular import read_error

FIELDS_CSV = files("sources") / "dcgm_fields.csv"
LIMITS = "telemetry_limits"
# A group's lines that are rejects (all of them where the group names no GPU or no valid metric,
# else its bad values), and the groups whose good samples are loaded.
REJECTED_LINES = "case when bad_metric or no_gpu then n_lines else n_lines - n_good end"
LOADED = "not bad_metric and not no_gpu"
# A GPU-hour part's samples of the fields the figures use; a field the file does not carry
# counts nothing (its n_* is null, not 0).
SAMPLES_USED = "coalesce(n_energy, 0) + coalesce(n_power, 0) + coalesce(n_util, 0) + coalesce(n_sm_active, 0) + coalesce(n_tensor_active, 0)"
# The staging models that turn _tel into a file's rows, by the table they fill.
PART_MODELS = (("gpu_hour_parts", "stg_dcgm__gpu_hour_parts.sql"), ("gpu_pod_parts", "stg_dcgm__gpu_pod_parts.sql"),
               ("gpu_request_parts", "stg_ksm__gpu_request_parts.sql"))
# Those keyed by GPU (a batch of files keeps its files apart by their GPUs' UUIDs)
GPU_PART_MODELS = PART_MODELS[:2]
# What fails a typed read (a reader's cells typed by DuckDB's CSV parser, or its sniffer's
# sample) where the text read may still succeed: a cell that does not parse, a line the parser
# or sniffer rejects. The text read is then the judge: its rows, rejects or Error stand.
TYPED_READ_FAILS = (duckdb.ConversionException, duckdb.InvalidInputException)




def time_slots() -> dict[str, str]:
    """The sample times a clock can write, in ms since 1970 (telemetry_limits.csv sample_time):
    the `ts_min_ms` / `ts_max_ms` slots of the models that test a sample's time."""
    bounds = {r["bound"]: r["value"] for r in read_rows(LIMITS) if r["applies_to"] == "sample_time"}
    return {"ts_min_ms": str(int(float(bounds["min"]))), "ts_max_ms": str(int(float(bounds["max"])))}


TIME_SLOTS = time_slots()
# What the groups count as good beyond the fixed tests: every reading on the one pass; on the
# second pass over a file with a reading past its limits, those within them.
GROUP_SLOTS = {**TIME_SLOTS, "plausible": "true"}
# The numbered samples as stg_telemetry__reject_lines.sql reads them when no reading was
# checked against its limits.
PLAIN_NUMBERED = "(select *, null::varchar as implausible, null::varchar as limit_text from _tel_samples_numbered)"


# Samples with the check each failed of those found past their limits (_tel_implausible, by
# series, time and value), as the groups' second pass and the reject-locating pass read them.
CHECKED = ("(select s.*, i.implausible, i.limit_text from {samples} s "
           "left join _tel_implausible i on i.series = s.series and i.ts_ms = s.ts_ms and i.value_text = s.value_text)")


def label_value(expr: str) -> str:
    """SQL for the text `expr` written as an exposition-format label value (backslash, quote and
    line feed escaped): label text built from a CSV's cells or a JSON map reads back as they were."""
    return f"replace(replace(replace({expr}, '\\', '\\\\'), '\"', '\\\"'), chr(10), '\\n')"


def reject_lines_sql(samples: str = PLAIN_NUMBERED) -> str:
    """The located rejects of the numbered samples `samples`."""
    return read_sql("10_staging", "stg_telemetry__reject_lines.sql", samples=samples, **TIME_SLOTS)


# The slots of stg_telemetry__groups.sql: the samples view, how it names a series and where its
# value is. By default the Prometheus series string `metric{labels`, split into metric and label
# text once per group, and a text value.
SERIES_KEYS = {
    **GROUP_SLOTS,
    "samples": "_tel_samples",
    "keys": "series",
    "value": "try_cast(value_text as double)",
    "metric": "split_part(series, '{', 1)",
    "labels": "case when strpos(series, '{') > 0 then substr(series, strpos(series, '{') + 1) else '' end",
    "carried": "",
}


# The second pass's slots (TelemetryReader.limited): the samples with the check each failed,
# those within their limits good.
LIMITED_KEYS = {**SERIES_KEYS, "samples": CHECKED.format(samples="_tel_samples"), "plausible": "implausible is null"}
# The columns of telemetry_limits.csv, typed.
LIMIT_COLUMNS = {"limit_id": "VARCHAR", "applies_to": "VARCHAR", "bound": "VARCHAR", "basis": "VARCHAR", "value": "DOUBLE",
                 "unit": "VARCHAR", "low": "DOUBLE", "high": "DOUBLE", "source": "VARCHAR", "retrieved": "VARCHAR", "notes": "VARCHAR"}
# gpu_ratings(key, rating_w) from {names}(name, rating_w), gpu_name_ratings()'s rows.
GPU_RATINGS = "select gpu_key(name) as key, max(rating_w) as rating_w from {names} as n group by gpu_key(name)"


def gpu_name_ratings() -> list[tuple[str, float]]:
    """Each GPU name gpu_specs and gpu_aliases know (model or alias) with its model's rating:
    the top of its TDP range."""
    specs: dict[str, list[float]] = {}
    for r in read_rows("gpu_specs"):
        if r["metric"] == "tdp_w":
            specs.setdefault(r["gpu_model"], []).append(float(r["high"]))
    names = [(r["gpu_model"], r["gpu_model"]) for r in read_rows("gpu_specs")] + \
        [(r["alias"], r["gpu_model"]) for r in read_rows("gpu_aliases")]
    return [(name, rating) for name, model in names for rating in specs.get(model, [])]


def limits_sql(carried: str = "") -> str:
    """_tel_bounds: each series' limits and whether its good readings leave them."""
    return read_sql("10_staging", "stg_telemetry__limits.sql", carried=carried)


def plausible_sql(carried: str = "") -> str:
    """_tel_implausible: the readings past their limits, of the series _tel_bounds found."""
    return read_sql("10_staging", "stg_telemetry__plausible.sql", carried=carried, **TIME_SLOTS)


class TelemetryReader(Reader):
    table = "gpu_hour_parts"

    def prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        con.execute("create or replace temp table dcgm_fields as select * from read_csv(?, header = true)", [str(FIELDS_CSV)])
        # the limits, and each GPU's rating (the top of its TDP range, under every alias), once
        # per connection
        con.execute(f"create temp table if not exists telemetry_limits as select * from read_csv({literal(REFERENCE_DIR / (LIMITS + '.csv'))}, "
                    f"header = true, columns = {{{', '.join(f'{literal(c)}: {literal(t)}' for c, t in LIMIT_COLUMNS.items())}}})")
        con.execute("create temp table if not exists gpu_ratings (key varchar, rating_w double)")
        if not one_row(con, "select count(*) from gpu_ratings")[0]:
            names, ratings = zip(*gpu_name_ratings())
            con.execute("insert into gpu_ratings " + GPU_RATINGS.format(names="(select unnest(?) as name, unnest(?) as rating_w)"),
                        [list(names), list(ratings)])

    def sample_views(self, con: duckdb.DuckDBPyConnection, name: str, sql: str, numbering: str = "row_number() over ()",
                     fast: dict[str, str] | None = None, **slots: str) -> None:
        """The reader's samples as two views of one text: `_tel_samples` without row numbers (the
        one fast pass; `fast` slots replace those of `slots` there) and `_tel_samples_numbered`,
        read only to locate rejects when there are some."""
        for view, extra in (("_tel_samples", {"row_number": "null::bigint", **(fast or {})}),
                            ("_tel_samples_numbered", {"row_number": numbering})):
            con.execute(f"create or replace temp view {view} as " + fill(name, sql, {**slots, **extra}))

    def group(self, con: duckdb.DuckDBPyConnection, head: Head, keys: dict[str, str] = SERIES_KEYS,
              restage: dict[str, Any] | None = None, no_samples: str | None = None) -> tuple[int, int]:
        """One pass over the reader's samples view into `_tel_groups`, then fold; rejected
        samples are located (a second, numbered pass) only when there are some.

        restage: the view's cells are typed by DuckDB's CSV parser, which fails the whole read on
        the first cell or line it cannot parse (TYPED_READ_FAILS); the file is then staged again
        with these options (the text view, where such a cell is a located reject or the Error
        it has always been).
        no_samples: a test on a group's metric for the groups of lines that are no samples
        (comments the view left in), deleted once grouped. Deleted by a statement of its own: as
        a WHERE on the pass, DuckDB pushed the test below the grouping, onto every line."""
        try:
            self.grouped(con, keys, no_samples)
        except TYPED_READ_FAILS as exc:
            if restage is not None:
                raise Restage(restage, "a time, value or line the typed read could not parse") from None
            raise read_error(head.path, exc) from None     # a CSV row short of fields: read again, padded
        except duckdb.Error as exc:
            raise duck_error(head.path, exc) from None
        rows_read, rejected = self.fold(con)
        samples = PLAIN_NUMBERED
        if self.beyond_limits(con):
            rows_read, rejected = self.limited(con, head, no_samples)
            samples = CHECKED.format(samples="_tel_samples_numbered")
        if rejected:
            con.execute("insert into _rejects " + reject_lines_sql(samples))
            located = one_row(con, "select count(distinct row_number) from _rejects")[0]
            if located != rejected:
                raise RuntimeError(f"{head.path}: {rejected} samples rejected by group but {located} located")
        return rows_read, rejected

    def beyond_limits(self, con: duckdb.DuckDBPyConnection, carried: str = "") -> bool:
        """Whether a series' good readings leave its limits (stg_telemetry__limits.sql: a
        reading above its ceiling, an energy counter that falls): tested on the groups, so a
        file within them pays nothing more."""
        con.execute("create or replace temp table _tel_bounds as " + limits_sql(carried))
        return bool(one_row(con, "select coalesce(bool_or(exceeded), false) from _tel_bounds")[0])

    def implausible(self, con: duckdb.DuckDBPyConnection, carried: str = "") -> int:
        """`_tel_implausible`: the readings past their limits (stg_telemetry__plausible.sql), of
        the series beyond_limits() found; how many."""
        con.execute("create or replace temp table _tel_implausible as " + plausible_sql(carried))
        return one_row(con, "select count(*) from _tel_implausible")[0]

    def limited(self, con: duckdb.DuckDBPyConnection, head: Head, no_samples: str | None) -> tuple[int, int]:
        """Group the samples again without the readings past their series' limits
        (stg_telemetry__plausible.sql): each is a rejected sample, located with the check it
        failed. Two more passes over the file (find them, group again), for a file that needs it."""
        self.implausible(con)
        try:
            self.grouped(con, LIMITED_KEYS, no_samples)
        except duckdb.Error as exc:
            raise duck_error(head.path, exc) from None
        return self.fold(con)

    def grouped(self, con: duckdb.DuckDBPyConnection, keys: dict[str, str], no_samples: str | None) -> None:
        """The one pass: the samples view grouped into `_tel_groups` (stg_telemetry__groups.sql
        with `keys`), less the groups of lines that are no samples (see group())."""
        con.execute("create or replace temp table _tel_groups as " + read_sql("10_staging", "stg_telemetry__groups.sql", **keys))
        if no_samples is not None:
            con.execute(f"delete from _tel_groups where {no_samples}")

    def fold(self, con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
        """From _tel_groups: labels, the common shape, and (rows read, rows rejected)."""
        con.execute("create or replace temp table _tel_labelsets as " + read_sql("10_staging", "stg_dcgm__labelsets.sql"))
        con.execute("create or replace temp table _tel as " + read_sql("10_staging", "stg_dcgm__tel.sql"))
        row = one_row(con, f"select coalesce(sum(n_lines), 0), coalesce(sum({REJECTED_LINES}), 0) from _tel")
        return row[0], row[1]

    def load(self, con: duckdb.DuckDBPyConnection, file_id: int) -> int:
        for table, model in PART_MODELS:
            con.execute(f"insert into {table} by name select ? as file_id, * from ({read_sql('10_staging', model)})", [file_id])
        return self.samples_loaded(con)

    def samples_loaded(self, con: duckdb.DuckDBPyConnection) -> int:
        """Samples of a known metric on a known GPU: the ones load() keeps."""
        return one_row(con, f"select coalesce(sum(n_good), 0) from _tel where {LOADED}")[0]

    def batch_key(self, head: Head) -> tuple | None:
        """None: this file is staged alone; files whose keys are equal may be staged as one
        batch (stage_batch)."""
        return None

    def batch_samples(self, con: duckdb.DuckDBPyConnection, heads: list[Head]) -> tuple[dict[str, str], str | None]:  # pragma: no cover
        """A view of the samples of every file of a batch, each with its `filename` as DuckDB
        names the file (the paths of `heads`); returns the slots of stg_telemetry__groups.sql
        over it (`carried` ', filename') and group()'s `no_samples` test."""
        raise NotImplementedError

    def stage_batch(self, con: duckdb.DuckDBPyConnection, heads: list[Head], file_ids: list[int]) -> list[tuple[int, int]]:
        """Stage small files of this kind as one, for load_batch(): one read of them all, each
        sample and group keeping its file's name, label sets parsed once, and each file's GPUs
        kept apart by their UUIDs prefixed with the file's id (`12:GPU-...`) until load_batch()
        splits them again. The staging models group by GPU, so every part is the one the file's
        own staging gives (a file's hour of a GPU is never merged with another file's here: the
        gpu_hours model does that, from the parts). Returns (rows read, samples loaded) per file,
        in order. Raises BatchMiss at the first rejected sample: locating rejects, and all that
        follows from them, is each file's own staging's."""
        self.prepare(con)
        con.execute("create or replace temp table _batch (filename varchar, file_id bigint)")
        con.executemany("insert into _batch values (?, ?)", [[str(h.path), i] for h, i in zip(heads, file_ids)])
        self.grouped(con, *self.batch_samples(con, heads))
        self.fold(con)
        # a counter that falls is most often a reset, which the batch keeps
        if self.beyond_limits(con, ", filename") and self.implausible(con, ", filename"):
            raise BatchMiss("a reading past its limits")
        # a pod's requests name no GPU to key the file's rows by: such a file is staged alone
        if one_row(con, "select count(*) from _tel where is_request")[0]:
            raise BatchMiss("kube-state-metrics requests")
        if one_row(con, "select count(*) from _tel anti join _batch using (filename)")[0]:
            raise RuntimeError("a batch's samples name a file outside it")
        con.execute("""create or replace temp table _tel as
                       select t.* exclude (filename) replace (b.file_id::varchar || ':' || t.gpu_uuid as gpu_uuid), b.file_id
                       from _tel t join _batch b using (filename)""")
        per_file = {r[0]: r[1:] for r in con.execute(f"""
            select b.file_id, coalesce(sum(t.n_lines), 0), coalesce(sum({REJECTED_LINES}), 0),
                   coalesce(sum(t.n_good) filter (where {LOADED}), 0)
            from _batch b left join _tel t using (file_id)
            group by b.file_id""").fetchall()}
        if any(rejected for _, rejected, _ in per_file.values()):
            raise BatchMiss("a rejected sample")
        return [(per_file[i][0], per_file[i][2]) for i in file_ids]

    def load_batch(self, con: duckdb.DuckDBPyConnection) -> None:
        """The parts of every file staged by stage_batch(), under each file's id and its GPUs' own UUIDs."""
        for table, model in GPU_PART_MODELS:
            con.execute(f"""insert into {table} by name
                            select split_part(gpu_uuid, ':', 1)::bigint as file_id,
                                   * replace (substr(gpu_uuid, strpos(gpu_uuid, ':') + 1) as gpu_uuid)
                            from ({read_sql('10_staging', model)})""")

    def totals(self, con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, Any]:
        """GPUs and samples; the file's energy is the int_gpu_hours model's (the ingest runner adds
        it), so `ingest --json` and the reports never disagree on one file."""
        return self.totals_batch(con, {file_id: self.samples_loaded(con)})[file_id]

    def totals_batch(self, con: duckdb.DuckDBPyConnection, loaded: dict[int, int]) -> dict[int, dict[str, Any]]:
        """totals() of each loaded file, given its samples loaded."""
        used = dict(con.execute(f"""
            select file_id, sum({SAMPLES_USED})
            from gpu_hour_parts where list_contains(?, file_id) group by file_id""", [list(loaded)]).fetchall())
        gpus = dict(con.execute("select file_id, count(distinct gpu_uuid) from gpu_hour_parts where list_contains(?, file_id) "
                                "group by file_id", [list(loaded)]).fetchall())
        return {i: {"gpus": gpus.get(i, 0), "samples": n, "samples_used": int(used.get(i) or 0),
                    "samples_other_metrics": n - int(used.get(i) or 0)} for i, n in loaded.items()}

    def remove(self, con: duckdb.DuckDBPyConnection, file_id: int) -> None:
        con.execute("delete from gpu_hour_parts where file_id = ?", [file_id])
        con.execute("delete from gpu_pod_parts where file_id = ?", [file_id])
        con.execute("delete from gpu_request_parts where file_id = ?", [file_id])
