"""Whatever ingest accepts, the month builds, reports and exports: no value a reader lets through
(a CodeCarbon run, a DCGM reading, a bill line at its limits) can make a later command fail with a
traceback. Each example writes a month of three real-format files with drawn numbers, ingests
them (a file may be refused whole, with its one line), then runs build, both reports and the
three exports: every command ends with exit 0, or 1 with one `Error:` line."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import DATA, run_cli

MONTH = "2026-10"
HOST = "i-0a5000000000002"          # the p5 of the minimal FOCUS file: the telemetry joins its bill
EDGE = ["0", "-0.0", "-1", "1e-300", "1e13", "1e26", "1e308", "NaN", "inf", "-inf", "", "12.5", "700", "5000", "150"]
numbers = st.one_of(st.sampled_from(EDGE), st.floats(allow_nan=True, allow_infinity=True).map(repr),
                    st.integers(-10 ** 20, 10 ** 20).map(str))
CODECARBON_NUMBERS = ("duration", "emissions", "cpu_energy", "gpu_energy", "ram_energy", "energy_consumed", "gpu_count", "pue")
DCGM_FIELDS = ("DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")
runs = st.lists(st.fixed_dictionaries({k: numbers for k in CODECARBON_NUMBERS}), min_size=1, max_size=3)
readings = st.lists(st.fixed_dictionaries({k: numbers for k in DCGM_FIELDS}), min_size=1, max_size=6)


def codecarbon_file(rows: list[dict], path: Path) -> Path:
    """The fixture's one run, repeated with the drawn numbers in its numeric columns."""
    with open(DATA / "codecarbon" / "energy_parts_do_not_add_up.csv", newline="", encoding="utf-8") as fh:
        header, template = list(csv.reader(fh))[:2]
    out = [header]
    for i, r in enumerate(rows):
        cells = list(template)
        cells[header.index("timestamp")] = f"2026-10-14T0{i}:30:00"
        for k, v in r.items():
            cells[header.index(k)] = v
        out.append(cells)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(out)
    return path


def dcgm_file(rows: list[dict], path: Path) -> Path:
    """dcgm-exporter text: one GPU of the billed host, a reading a minute with the drawn values."""
    labels = f'gpu="0",UUID="GPU-00000000-0000-0000-0000-00000000a100",modelName="NVIDIA H100 80GB HBM3",Hostname="{HOST}"'
    t0 = 1_791_936_000_000         # 2026-10-14T00:00:00Z in ms
    lines = [f"{field}{{{labels}}} {r[field] or '0'} {t0 + i * 60_000}" for i, r in enumerate(rows) for field in DCGM_FIELDS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ends_cleanly(code: int, err: str, what: str) -> None:
    assert "Traceback" not in err, f"{what}: {err[-3000:]}"
    errors = [ln for ln in err.splitlines() if ln.startswith("Error: ")]
    assert code == 0 or (code == 1 and len(errors) == 1), f"{what} exit {code}: {err[-3000:]}"


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(cc=[dict.fromkeys(CODECARBON_NUMBERS, "1e26"), dict.fromkeys(CODECARBON_NUMBERS, "1e-300")],
         tel=[dict.fromkeys(DCGM_FIELDS, "1e308"), dict.fromkeys(DCGM_FIELDS, "699"), dict.fromkeys(DCGM_FIELDS, "-1")])
@given(cc=runs, tel=readings)
def test_whatever_loads_builds_reports_and_exports(tmp_path_factory, cc, tel):
    tmp = tmp_path_factory.mktemp("accepted")
    wh, out = str(tmp / "wh.duckdb"), tmp / "out"
    files = [str(DATA / "focus" / "focus_1.2_minimal.csv"), str(codecarbon_file(cc, tmp / "emissions.csv")),
             str(dcgm_file(tel, tmp / f"{HOST}.prom"))]
    code, stdout, err = run_cli("ingest", *files, "--warehouse", wh, "--keep-going", "--json")
    statuses = [f["status"] for f in json.loads(stdout)["files"]]
    assert statuses[0] == "loaded" and len(statuses) == 3 and "Traceback" not in err, (statuses, err[-3000:])
    # a refused file is one Error line of its own, and the run says so by its exit code
    assert err.count("Error: ") == statuses.count("failed") and code == (1 if "failed" in statuses else 0), err
    for command in (["build"], ["report", "chargeback", "--month", MONTH, "--out", str(out), "--per-team"],
                    ["report", "audit", "--month", MONTH, "--out", str(out)],
                    ["export", "focus", "--month", MONTH, "--out", str(tmp / "focus")],
                    ["export", "allocation", "--month", MONTH, "--out", str(tmp / "exports")],
                    ["export", "jobs", "--month", MONTH, "--out", str(tmp / "jobs")]):
        code, _, err = run_cli(*command, "--warehouse", wh)
        ends_cleanly(code, err, " ".join(command[:2]))
