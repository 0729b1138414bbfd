"""Every public file in ../shared/samples/real-world behaves as its PROVENANCE.md says (issue 15).

The `Expect` column of each folder's table: `valid` files load, their totals equal a sum over the
file's own columns made here (DuckDB or Python, never the reader's code), rows read equal the
file's data records counted here, and every reject is located; `invalid` files stop with one
`Error:` line, exit 1 and nothing written; `lenient` files may do either. A table without an
Expect column (telemetry scrapes, CodeCarbon runs, model cards: real tools' own output) means
valid. Nothing may load silently empty.
"""
from __future__ import annotations

import csv
import gc
import gzip
import io
import json
import re
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner

from pipelines.cli import main
from tests.conftest import SAMPLES

REAL = SAMPLES / "real-world"
# The file's own billed column, by spelling (first present wins, names matched ignoring case).
BILLED = ("lineItem/NetUnblendedCost", "lineItem/UnblendedCost", "line_item_net_unblended_cost",
          "line_item_unblended_cost", "CostInBillingCurrency", "Cost", "PreTaxCost", "cost/myCost", "BilledCost", "cost")


def expectations() -> dict[str, str]:
    """{folder/file: valid | invalid | lenient} from PROVENANCE.md's tables."""
    out: dict[str, str] = {}
    folder = None
    header: list[str] = []
    for line in (REAL / "PROVENANCE.md").read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^## (\S+?)/", line):
            folder, header = m.group(1), []
            continue
        if not line.startswith("|") or folder is None:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = cells
        elif not set(cells[0]) <= {"-", ":"}:
            row = dict(zip(header, cells))
            out[f"{folder}/{row['File']}"] = row.get("Expect", "valid")
    return out


EXPECT = expectations() if REAL.is_dir() else {}


def test_provenance_lists_every_file(samples):
    on_disk = {str(p.relative_to(REAL)) for p in REAL.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"}
    assert on_disk and on_disk == set(EXPECT)
    assert set(EXPECT.values()) <= {"valid", "invalid", "lenient"}


def ingest(wh: Path, path: Path):
    res = CliRunner().invoke(main, ["ingest", str(path), "--warehouse", str(wh), "--json"])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    out = (res.exit_code, res.stdout, res.stderr)
    del res
    gc.collect()
    return out


def text_of(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8").lstrip("\ufeff")


def csv_records(path: Path) -> list[list[str]]:
    """The file's non-blank CSV records by Python's csv module (the header first)."""
    return [r for r in csv.reader(io.StringIO(text_of(path), newline="")) if r]


def independent(path: Path, kind: str, rejected: frozenset[int] = frozenset()) -> dict:
    """What the file holds, computed here: data rows and the totals the reader must report (money
    of the data rows the reader did not reject: a reject is located, and its money not loaded)."""
    if kind == "dcgm-prom":
        lines = [ln for ln in text_of(path).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        energy = {}
        for ln in lines:
            if ln.startswith("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{") and (u := re.search(r'UUID="([^"]+)"', ln)):
                energy.setdefault(u.group(1), []).append(float(ln.rsplit("}", 1)[1].split()[0]))
        # a scrape's rejects are located by line number, comments included
        return {"rows": len(lines), "energy_kwh": sum(max(v) - min(v) for v in energy.values()) / 3.6e9,
                "last_row": len(text_of(path).splitlines())}
    if kind == "nvidia-smi-exporter":    # the power and utilisation gauges are its rows
        lines = text_of(path).splitlines()
        read = ("nvidia_smi_power_draw_watts{", "nvidia_smi_utilization_gpu_ratio{")
        return {"rows": sum(ln.startswith(read) for ln in lines), "last_row": len(lines)}
    if kind == "hf-model-card":
        meta = yaml.safe_load(text_of(path).split("---")[1])
        return {"rows": 1, "co2e_location_t": float(meta["co2_eq_emissions"]["emissions"]) / 1e6}
    records = csv_records(path)
    out: dict = {"rows": len(records) - 1}
    con = duckdb.connect()
    src = (f"read_csv('{path}', all_varchar = true, header = true, delim = ',', quote = '\"', escape = '\"', "
           "comment = '', null_padding = true, parallel = false, strict_mode = false)")
    cols = {r[0].strip().lower(): r[0] for r in con.execute(f"describe select * from {src}").fetchall()}
    # a single-threaded read numbers its records in file order
    kept = f"(select * from {src} with ordinality where ordinality not in ({', '.join(map(str, rejected)) or '0'}))"

    def total(col: str) -> float:
        return con.execute(f'select coalesce(sum(try_cast(trim("{cols[col]}") as double)), 0) from {kept}').fetchone()[0]

    if kind == "codecarbon":
        out |= {"energy_kwh": total("energy_consumed"), "emissions_kg": total("emissions")}
    else:
        billed = next(c.lower() for c in BILLED if c.lower() in cols)
        out["billed_cost"] = total(billed)
        if kind == "gcp-billing":     # credits (JSON or Python literal) are billed lines of their own
            out["billed_cost"] += con.execute(f"""
                select coalesce(sum(try_cast(a as double)), 0) from (
                    select unnest(regexp_extract_all("{cols['credits']}", '[''"]amount[''"]:\\s*([-+0-9.eE]+)', 1)) as a
                    from {kept})""").fetchone()[0]
    con.close()
    return out


def billed_total(totals: dict) -> float:
    if totals.get("currency") == "mixed":
        return sum(t["billed_cost"] for t in totals["by_currency"].values())
    return totals["billed_cost"]


def check_loaded(wh: Path, path: Path, f: dict) -> None:
    assert f["status"] == "loaded"
    assert f["rows_read"] == f["rows_loaded"] + f["rows_rejected"]
    con = duckdb.connect(str(wh), read_only=True)
    rejected = frozenset(r[0] for r in con.execute("select distinct row_number from rejects").fetchall())
    con.close()
    truth = independent(path, f["kind"], rejected)
    assert f["rows_read"] == truth["rows"], "rows read differ from the file's own data records"
    assert f["rows_loaded"] > 0 or truth["rows"] == 0, "loaded silently empty"
    t = f["totals"]
    if "billed_cost" in truth:
        assert billed_total(t) == pytest.approx(truth["billed_cost"], rel=1e-9, abs=1e-12), "money left the file"
    for key in ("energy_kwh", "emissions_kg", "co2e_location_t"):
        if key in truth:
            assert t[key] == pytest.approx(truth[key], rel=1e-9, abs=1e-15), key
    last = truth.get("last_row", f["rows_read"])
    con = duckdb.connect(str(wh), read_only=True)
    located = con.execute("""select count(distinct row_number), count(*) filter (where row_number is null
                                   or row_number not between 1 and ? or check_name is null)
                             from rejects""", [last]).fetchone()
    noted = con.execute("select count(*) filter (where row_number not between 1 and ? or check_name is null) from row_findings",
                        [last]).fetchone()[0]
    con.close()
    assert located == (f["rows_rejected"], 0) and noted == 0, "every reject and finding names its row and check"


def check_refused(wh: Path, path: Path, code: int, stdout: str, stderr: str) -> None:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert code == 1 and [f["status"] for f in json.loads(stdout)["files"]] == ["failed"] and "Traceback" not in stderr
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}: "), stderr
    if wh.exists():
        con = duckdb.connect(str(wh), read_only=True)
        assert con.execute("select count(*) from source_files").fetchone()[0] == 0
        con.close()


@pytest.mark.parametrize("name", sorted(EXPECT), ids=str)
def test_real_world_file_behaves_as_its_provenance_says(samples, tmp_path, name):
    path, expect = REAL / name, EXPECT[name]
    wh = tmp_path / "wh.duckdb"
    code, stdout, stderr = ingest(wh, path)
    if expect == "invalid" or (expect == "lenient" and code != 0):
        check_refused(wh, path, code, stdout, stderr)
        return
    assert code == 0, stderr
    (f,) = json.loads(stdout)["files"]
    check_loaded(wh, path, f)
