"""Peer tools' values for the same items as our coefficients, read from their own tables.

`collect(shared_data)` reads the peer tables copied byte-for-byte into
``../shared/reference/data`` (CodeCarbon, Cloud Carbon Footprint, Green Algorithms, ML CO2 Impact,
LLMCarbon, SPRUCE) and computes Boavizta's embodied figures by calling the ``boaviztapi`` package's
component and server models in-process. Each value is paired with the coefficient id it speaks to
and converted to that coefficient's unit. Values peers publish only in code or prose (CCF's PUE
constants, SPRUCE's PSU factor) cannot be read from a table; they are kept in
``sources/reference/peer_values.csv`` with ``method = quoted`` and carried over unchanged.

``python -m tools.peers [SHARED_DATA]`` rewrites ``peer_values.csv`` (``make peers``) and prints
the comparison table. boaviztapi is a test dependency (AGPL-3.0: called, never copied or shipped).
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import astuple, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

from core.units import G_PER_LB, KWH_PER_MWH
from reports.methodology import format_peer_table, peer_comparison
from sources.reference_data import KEYS, REFERENCE_DIR, _norm_region, coefficient_id, read_rows, resolve_gpu

PEER_FILE = REFERENCE_DIR / "peer_values.csv"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "reference" / "data"

# Upstream snapshots, as pinned in ../shared/reference/data/PROVENANCE.md.
CODECARBON = "mlco2/codecarbon@b05965e"
CCF = "cloud-carbon-footprint/cloud-carbon-coefficients@dda7621"
GREEN_ALGORITHMS = "GreenAlgorithms/green-algorithms-tool@30df2fe"
MLCO2 = "mlco2/impact@d0d3ee5"
LLMCARBON = "SotaroKaneda/MLCarbon@dbd96b7"
SPRUCE = "DigitalPebble/spruce@8840d3c"

# Unit conversions of the peers' tables into ours (PROVENANCE.md "Units differ between sources").
G_PER_KWH_PER_T_PER_KWH = 1e6
G_PER_KWH_PER_LB_PER_MWH = G_PER_LB / KWH_PER_MWH
FLOPS_PER_TFLOPS = 1e12
HOURS_PER_YEAR = 8760          # Boavizta's year: its 26,280 h GPU life is 3 years

# Boavizta's gpu_specs names for our canonical parts (resolve_gpu does not know these spellings).
BOAVIZTA_GPUS = {
    "A100-SXM4-40GB": "NVIDIA A100 SXM4 40GB", "A100-SXM4-80GB": "NVIDIA A100 SXM4 80GB",
    "A100-PCIE-40GB": "NVIDIA A100 PCIe 40GB", "A100-PCIE-80GB": "NVIDIA A100 PCIe 80GB",
    "H100-SXM5-80GB": "NVIDIA H100 SXM 80GB", "H100-PCIE-80GB": "NVIDIA H100 PCIe 80GB",
    "H100-NVL-94GB": "NVIDIA H100 NVL 94GB", "H200-SXM-141GB": "NVIDIA H200 SXM 141GB",
    "V100-SXM2-16GB": "NVIDIA Tesla V100 SXM2 16GB", "V100-SXM2-32GB": "NVIDIA Tesla V100 SXM2 32GB",
    "V100-PCIE-16GB": "NVIDIA Tesla V100 PCIe 16GB", "V100-PCIE-32GB": "NVIDIA Tesla V100 PCIe 32GB",
    "B200": "NVIDIA B200 180GB", "B300": "NVIDIA B300 288GB", "MI300X": "AMD Instinct MI300X 192GB",
    "T4": "NVIDIA T4", "L4": "NVIDIA L4", "A10": "NVIDIA A10", "L40S": "NVIDIA L40S 48GB",
    "P100-PCIE-16GB": "NVIDIA P100", "P4": "NVIDIA Tesla P4",
}
# Boavizta's AWS 8-GPU server archetypes. Its GCP a2/a3 archetypes are left out: they list the
# whole machine's memory as the size of each of 340+ modules (hundreds of tonnes of RAM).
BOAVIZTA_SERVERS = ("p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge")


@dataclass(frozen=True)
class PeerValue:
    coefficient_id: str
    peer: str          # the label a coefficient's notes use to name it ("<peer> excluded: why")
    value: float       # in the coefficient's unit
    unit: str
    peer_item: str     # the peer's own name for the item
    year: str          # data year where the peer states one
    method: str        # read (a table in ../shared), computed (boaviztapi), quoted (code or docs)
    source: str


COLUMNS = tuple(f.name for f in fields(PeerValue))


def _pv(cid: str, peer: str, value: float, item: str, year: str, method: str, source: str) -> PeerValue | None:
    """A peer value for coefficient ``cid``; None when we hold no such coefficient (e.g. a peer's
    K80 or its 'usa' average), which collect() drops."""
    if cid not in _units():
        return None
    return PeerValue(cid, peer, round(float(value), 6), _units()[cid], item, year, method, source)


@lru_cache(maxsize=None)
def _units() -> dict[str, str]:
    return {coefficient_id(n, r): r["unit"] for n in KEYS for r in read_rows(n)}


def _csv(path: Path, skip: int = 0) -> list[dict[str, str]]:
    # Green Algorithms puts a units row above the header; SPRUCE comments with '#', header included.
    lines = path.read_text(encoding="utf-8-sig").splitlines()[skip:]
    if lines and lines[0].startswith("#"):
        header = [ln.lstrip("# ") for ln in lines if ln.startswith("#") and "," in ln][-1]
        lines = [header, *(ln for ln in lines if not ln.startswith("#"))]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def _year(text: str) -> str:
    m = re.search(r"(?:data from|Data from)[^0-9]*(\d{4})", text)
    return m.group(1) if m else ""


def _gpu(cid_metric: str, name: str) -> str | None:
    model = resolve_gpu(name)
    return f"gpu_specs:{model}:{cid_metric}" if model else None


# ----------------------------------------------------------------------- grid intensity


def codecarbon(root: Path) -> Iterator[PeerValue | None]:
    d = root / "codecarbon"
    # CodeCarbon keys countries by ISO3, ours are ISO2: pair them by the country name each of our
    # rows' notes begin with (the test fails if a country goes unpaired).
    ours = {r["notes"].split(";")[0]: r["zone_id"] for r in read_rows("grid_intensity")
            if r["zone_kind"] == "country" and r["basis"] == "location"}
    src = f"{CODECARBON} codecarbon/data/private_infra/global_energy_mix.json"
    for iso3, c in json.loads((d / "global_energy_mix.json").read_text(encoding="utf-8")).items():
        if c["country_name"] in ours:
            yield _pv(f"grid_intensity:country:{ours[c['country_name']]}:{_grid_year('country', ours[c['country_name']])}:location",
                      "CodeCarbon", c["carbon_intensity"], iso3, str(c["year"]), "read", src)
    src = f"{CODECARBON} codecarbon/data/private_infra/2016/usa_emissions.json (lb/MWh to g/kWh with the exact pound)"
    for state, s in json.loads((d / "usa_emissions.json").read_text(encoding="utf-8")).items():
        if not state.startswith("_"):   # "_unit" documents the units
            zone = f"US-{s['regionCode']}"
            yield _pv(f"grid_intensity:us_state:{zone}:{_grid_year('us_state', zone)}:location", "CodeCarbon",
                      s["emissions"] * G_PER_KWH_PER_LB_PER_MWH, state, "2016", "read", src)
    for r in _csv(d / "impact.csv"):
        zone = f"gcp:{r['region']}"
        if _grid_year("cloud_region", zone):
            yield _pv(f"grid_intensity:cloud_region:{zone}:{_grid_year('cloud_region', zone)}:location", "CodeCarbon",
                      float(r["impact"]), r["region"], "", "read", f"{CODECARBON} codecarbon/data/cloud/impact.csv")
    world = json.loads((d / "carbon_intensity_per_source.json").read_text(encoding="utf-8"))["world_average"]
    src = f"{CODECARBON} codecarbon/data/private_infra/carbon_intensity_per_source.json world_average (IEA)"
    yield _pv(f"grid_intensity:world:WORLD:{_grid_year('world', 'WORLD')}:location", "CodeCarbon", world, "world_average", "2019", "read", src)
    yield _pv("assumptions:grid_intensity_world_fallback", "CodeCarbon", world, "world_average", "2019", "read", src)


# Green Algorithms' provider names -> operators.csv keys (operator:year) of the fleet PUE rows
OPERATOR_FLEET = {"aws": ("aws:2020",), "gcp": ("google:2019",), "azure": ("microsoft:2020",), "unknown": ("unknown:",)}


def green_algorithms(root: Path) -> Iterator[PeerValue | None]:
    d = root / "green-algorithms"
    ci = {r["location"]: r for r in _csv(d / "CI_aggregated.csv", skip=1)}
    src = f"{GREEN_ALGORITHMS} data/latest/CI_aggregated.csv"
    for loc, r in ci.items():
        kind, zone = (("world", "WORLD") if loc == "WORLD" else ("us_state", loc) if loc.startswith("US-")
                      else ("country", loc) if r["Type"] == "Country" else (None, None))
        year = _year(r["source"] + " " + r["comments"])
        if kind and zone is not None and _grid_year(kind, zone):
            yield _pv(f"grid_intensity:{kind}:{zone}:{_grid_year(kind, zone)}:location", "Green Algorithms",
                      float(r["carbonIntensity"]), loc, year, "read", src)
        if kind == "world":
            yield _pv("assumptions:grid_intensity_world_fallback", "Green Algorithms", float(r["carbonIntensity"]),
                      loc, year, "read", src)
    src_dc = f"{GREEN_ALGORITHMS} data/latest/cloudProviders_datacenters.csv -> CI_aggregated.csv"
    for r in _csv(d / "cloudProviders_datacenters.csv", skip=1):
        zone = f"{r['provider']}:{_norm_region(r['Name'])}"
        ci_row = ci.get(r["location"])
        if ci_row and _grid_year("cloud_region", zone):
            yield _pv(f"grid_intensity:cloud_region:{zone}:{_grid_year('cloud_region', zone)}:location", "Green Algorithms",
                      float(ci_row["carbonIntensity"]), f"{r['Name']} ({r['location']})",
                      _year(ci_row["source"] + " " + ci_row["comments"]), "read", src_dc)
        if r["PUE"].strip() and _exists(f"pue:{r['provider']}:{r['Name']}:hyperscale"):
            yield _pv(f"pue:{r['provider']}:{r['Name']}:hyperscale", "Green Algorithms", float(r["PUE"]), r["Name"],
                      "2020", "read", f"{GREEN_ALGORITHMS} data/latest/cloudProviders_datacenters.csv")
    src = f"{GREEN_ALGORITHMS} data/latest/defaults_PUE.csv"
    for r in _csv(d / "defaults_PUE.csv", skip=1):
        p = r["provider"].lower()
        cids = (["pue:::unknown", "assumptions:pue_unknown"] if p == "unknown" else [f"pue:{p}::hyperscale"])
        # the operators' fleet rows that reconstruct uses when a disclosure names the operator only
        cids += [f"operators:{op}:pue" for op in OPERATOR_FLEET.get(p, ())]
        for cid in filter(_exists, cids):
            yield _pv(cid, "Green Algorithms", float(r["PUE"]), r["provider"], _year_of(r["source"]), "read", src)
    src = f"{GREEN_ALGORITHMS} data/latest/TDP_gpu.csv"
    for r in _csv(d / "TDP_gpu.csv", skip=1):
        gpu_cid = _gpu("tdp_w", r["model"])
        if gpu_cid and r["TDP"].strip() and _exists(gpu_cid):
            yield _pv(gpu_cid, "Green Algorithms", float(r["TDP"]), r["model"], "", "read", src)
    ref = {r["variable"]: r for r in _csv(d / "referenceValues.csv", skip=1)}
    yield _pv("assumptions:memory_power_w_per_gb", "Green Algorithms", float(ref["memoryPower"]["value"]), "memoryPower",
              "", "read", f"{GREEN_ALGORITHMS} data/latest/referenceValues.csv")


def _year_of(text: str) -> str:
    m = re.search(r"\b(20\d\d)\b", text)
    return m.group(1) if m else ""


def ccf(root: Path) -> Iterator[PeerValue | None]:
    d = root / "ccf-coefficients"
    for provider in ("aws", "gcp", "azure"):
        src = f"{CCF} data/grid-emissions-factors-{provider}.csv (t/kWh x 1e6)"
        for r in _csv(d / f"grid-emissions-factors-{provider}.csv"):
            zone = f"{provider}:{_norm_region(r['Region'])}"
            if _grid_year("cloud_region", zone):
                yield _pv(f"grid_intensity:cloud_region:{zone}:{_grid_year('cloud_region', zone)}:location", "CCF",
                          _ccf_factor(r["CO2e (metric ton/kWh)"]) * G_PER_KWH_PER_T_PER_KWH, r["Region"], "", "read", src)
    embodied = {r["type"]: r for r in _csv(d / "coefficients-aws-embodied.csv")}
    src = f"{CCF} output/coefficients-aws-embodied.csv + data/aws-instances.csv"
    seen: set[str] = set()
    for r in _csv(d / "aws-instances.csv"):
        n, gpu = r["Platform GPU Quantity"].strip(), r["Platform GPU Name"].strip()
        e = embodied.get(r["Instance type"])
        model = resolve_gpu(gpu) if gpu else None
        if not (e and model and n not in ("", "0")) or model in seen or not _exists(f"embodied:{model}:gpu"):
            continue
        seen.add(model)
        yield _pv(f"embodied:{model}:gpu", "CCF", float(e["additional_gpus"]) / float(n), gpu, "", "read", src)
    p4d = embodied["p4d.24xlarge"]
    yield _pv("embodied:8-gpu-hgx-server-incl-gpus:server", "CCF", float(p4d["total"]), "p4d.24xlarge total", "", "read", src)
    yield _pv("embodied:8-gpu-hgx-server:server", "CCF", float(p4d["total"]) - float(p4d["additional_gpus"]),
              "p4d.24xlarge total - additional_gpus", "", "read", src)
    yield _pv("assumptions:gpu_embodied_kgco2e_unknown", "CCF", float(p4d["additional_gpus"]) / 8, "additional_gpus / 8",
              "", "read", src)


def _ccf_factor(raw: str) -> float:
    # Two Azure rows (Finland Central, Germany West Central) drop the "0." and read "000077": read
    # literally that is 77 t/kWh. A factor with leading zeros and no point is taken as 0.<digits>.
    return float("0." + raw) if re.fullmatch(r"0\d+", raw.strip()) else float(raw)


def spruce(root: Path) -> Iterator[PeerValue | None]:
    d = root / "spruce"
    src = f"{SPRUCE} src/main/resources/ember/ember_co2_intensity.csv (Ember, CC-BY-4.0)"
    for r in _csv(d / "ember_co2_intensity.csv"):
        zone = f"{r['provider']}:{r['region']}"
        if _grid_year("cloud_region", zone):
            yield _pv(f"grid_intensity:cloud_region:{zone}:{_grid_year('cloud_region', zone)}:location", "SPRUCE",
                      float(r["gCO2_per_kWh"]), r["region"], "", "read", src)
    for provider, name, key in (("aws", "aws-pue-wue.csv", "RegionID"), ("azure", "azure-pue-wue.csv", "RegionID")):
        for r in _csv(d / name):
            region = r[key].replace(".+", "*")   # SPRUCE's regex rows ('eu-.+') are our glob rows ('eu-*')
            cid = f"pue:{provider}:{region}:hyperscale"
            if r["PUE"].strip() and _exists(cid):
                yield _pv(cid, "SPRUCE", float(r["PUE"]), r[key], "", "read", f"{SPRUCE} src/main/resources/{name}")
    info = json.loads((d / "accelerators.json").read_text(encoding="utf-8"))["GPU_INFO"]
    src = f"{SPRUCE} src/main/resources/ccf/accelerators.json GPU_INFO"
    for name, w in info.items():
        for metric, key in (("tdp_w", "max"), ("idle_w", "min")):
            gpu_cid = _gpu(metric, name)
            if gpu_cid and _exists(gpu_cid):
                yield _pv(gpu_cid, "SPRUCE", float(w[key]), f"{name} {key}", "", "read", src)
        yield _pv("assumptions:idle_power_fraction_of_tdp", "SPRUCE", w["min"] / w["max"], f"{name} min/max", "", "read", src)


# ----------------------------------------------------------------------- GPU specs, MFU


def mlco2_impact(root: Path) -> Iterator[PeerValue | None]:
    src = f"{MLCO2} data/gpus.csv"
    tdp_by_row: dict[str, float | None] = {}
    with open(root / "mlco2-impact" / "gpus.csv", newline="", encoding="utf-8") as f:
        for r in csv.reader(f):
            # Positional: the header has a stray space (' TFLOPS16') and the A10G row is one
            # field short, which only shifts the fields after TFLOPS16.
            if r[0] == "name" or r[1] not in ("gpu", "tpu"):
                continue
            for metric, raw, scale in (("tdp_w", r[2], 1.0), ("peak_flops_fp32", r[3], FLOPS_PER_TFLOPS),
                                       ("peak_flops_fp16", r[4], FLOPS_PER_TFLOPS)):
                cid = _gpu(metric, r[0])
                if cid and _exists(cid) and (x := _number(raw)) is not None:
                    yield _pv(cid, "ML CO2 Impact", x * scale, r[0], "", "read", src)
            tdp_by_row[r[0]] = _number(r[2])
    # convention_tdp copies the calculator's rows, each naming the row it copied ("row 'Tesla P100'");
    # reading that row back proves the copy, also where one row serves several of our models
    for c in read_rows("convention_tdp"):
        row = re.search(r"row '([^']+)'", c["source"])
        if c["convention"] == "mlco2-impact" and row and (tdp := tdp_by_row.get(row.group(1))) is not None:
            yield _pv(f"convention_tdp:mlco2-impact:{c['gpu_model']}", "ML CO2 Impact", tdp,
                      row.group(1), "", "read", src)


def _number(raw: str) -> float | None:
    try:
        v = float(raw)
    except ValueError:
        return None
    return None if v != v else v   # NaN


def llmcarbon(root: Path) -> Iterator[PeerValue | None]:
    d = root / "mlcarbon"
    src = f"{LLMCARBON} data/database.csv"
    # The training runs name the device; its peak is the precision the run used (V100 FP16, TPU BF16).
    peak_metric = {"V100": "peak_flops_fp16", "TPUV3": "peak_flops_bf16"}
    for r in _csv(d / "database.csv"):
        dev = r["computing device"]
        for cid, value in ((_gpu("tdp_w", dev), float(r["device TPD (W)"])),
                           (_gpu(peak_metric.get(dev, ""), dev), float(r["peak TFLOPs/s"]) * FLOPS_PER_TFLOPS)):
            if cid and _exists(cid):
                yield _pv(cid, "LLMCarbon", value, f"{dev} ({r['name']})", "", "read", src)
        yield _pv("assumptions:mfu_typical", "LLMCarbon", float(r["hardware efficiency"]), f"{r['name']} hardware efficiency",
                  "", "read", src)
    src = f"{LLMCARBON} data/hardware.csv (unit x CPA)"
    for r in _csv(d / "hardware.csv"):
        model = resolve_gpu(r["hardware"]) if r["hardware"] in ("V100", "H100") else None
        if model and _exists(f"embodied:{model}:gpu"):
            yield _pv(f"embodied:{model}:gpu", "LLMCarbon", float(r["unit (cm2 or GB)"]) * float(r["CPA (kgCO2/cm2 or GB)"]),
                      f"{r['hardware']} die", "", "read", src)


# ----------------------------------------------------------------------- Boavizta (in-process)


def boavizta() -> Iterator[PeerValue | None]:
    """Embodied (manufacture + transport + end of life) over each model's own full life."""
    import warnings
    from importlib.metadata import version

    # An ImportError here means the test extra is missing (pip install --no-deps -r requirements.lock).
    from boaviztapi import config
    from boaviztapi.compute.impacts_computation import compute_impacts
    from boaviztapi.data.archetype import get_component_archetype, get_server_archetype
    from boaviztapi.dto.component.gpu import GPU, mapper_gpu
    from boaviztapi.models.component import ComponentGPU
    from boaviztapi.models.device.server import DeviceServer

    src = f"boaviztapi {version('boaviztapi')} (PyPI) models.component.gpu, called in-process"
    gpu_arch = get_component_archetype(config.default_gpu, "gpu")
    for model, name in BOAVIZTA_GPUS.items():
        if _exists(f"embodied:{model}:gpu"):
            yield _pv(f"embodied:{model}:gpu", "Boavizta", _embodied_gwp(mapper_gpu(GPU(name=name), gpu_arch), compute_impacts),
                      name, "", "computed", src)
    default_gpu = mapper_gpu(GPU(), gpu_arch)
    yield _pv("assumptions:gpu_embodied_kgco2e_unknown", "Boavizta", _embodied_gwp(default_gpu, compute_impacts),
              "GPU archetype DEFAULT", "", "computed", src)
    src = f"boaviztapi {version('boaviztapi')} (PyPI) models.device.server archetypes, called in-process"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # scipy curve_fit warnings from the use-phase profile we do not use
        for name in BOAVIZTA_SERVERS:
            server = DeviceServer(archetype=get_server_archetype(name))
            compute_impacts(server, ["gwp"], duration=server.usage.hours_life_time.value)
            parts = [(isinstance(c, ComponentGPU), c.impacts["gwp"]["embedded"].value) for c in server.components]
            yield _pv("embodied:8-gpu-hgx-server-incl-gpus:server", "Boavizta", sum(v for _, v in parts),
                      f"{name} all components", "", "computed", src)
            yield _pv("embodied:8-gpu-hgx-server:server", "Boavizta", sum(v for g, v in parts if not g),
                      f"{name} components other than GPUs", "", "computed", src)
    server = DeviceServer(archetype=get_server_archetype(config.default_server))
    yield _pv("assumptions:hardware_lifetime_years", "Boavizta", server.usage.hours_life_time.value / HOURS_PER_YEAR,
              f"{config.default_server} hours_life_time", "", "computed", src)
    yield _pv("assumptions:hardware_lifetime_years", "Boavizta", default_gpu.usage.hours_life_time.value / HOURS_PER_YEAR,
              "GPU archetype DEFAULT hours_life_time", "", "computed", src)
    yield _pv("assumptions:server_overhead_fraction", "Boavizta", server.usage.other_consumption_ratio.value,
              f"{config.default_server} other_consumption_ratio", "", "computed", src)
    yield _pv("assumptions:gpu_utilization_unknown", "Boavizta", server.usage.time_workload.value / 100,
              f"{config.default_server} time_workload (%)", "", "computed", src)


def _embodied_gwp(component, compute_impacts) -> float:
    compute_impacts(component, ["gwp"], duration=component.usage.hours_life_time.value)
    return round(component.impacts["gwp"]["embedded"].value, 1)


# ----------------------------------------------------------------------- assembly


def _exists(cid: str) -> bool:
    return cid in _units()


def _grid_year(kind: str, zone: str) -> str:
    """Year of our first location row for a zone ('' if we have none). Peers are compared with
    that row; rows for later years appended below it are other items, compared on their own."""
    return _first_grid_years().get((kind, zone), "")


@lru_cache(maxsize=None)
def _first_grid_years() -> dict[tuple[str, str], str]:
    first: dict[tuple[str, str], str] = {}
    for r in read_rows("grid_intensity"):
        if r["basis"] == "location":
            first.setdefault((r["zone_kind"], r["zone_id"]), r["year"])
    return first


def read_committed(path: Path = PEER_FILE) -> list[PeerValue]:
    with open(path, newline="", encoding="utf-8") as f:
        rows: Iterable[dict[str, Any]] = csv.DictReader(f)
        return [PeerValue(**{**r, "value": float(r["value"])}) for r in rows]


def collect(shared_data: Path = SHARED_DATA, quoted: Iterable[PeerValue] | None = None) -> list[PeerValue]:
    """Every peer value: read and computed ones fresh, quoted ones carried over from the file."""
    if quoted is None:
        quoted = [p for p in read_committed() if p.method == "quoted"] if PEER_FILE.exists() else []
    found = [*codecarbon(shared_data), *green_algorithms(shared_data), *ccf(shared_data), *spruce(shared_data),
             *mlco2_impact(shared_data), *llmcarbon(shared_data), *boavizta(), *quoted]
    return sorted({p for p in found if p is not None}, key=lambda p: (p.coefficient_id, p.peer, p.peer_item, p.value))


def write(values: list[PeerValue], path: Path = PEER_FILE) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for p in values:
            row = list(astuple(p))
            row[2] = format_value(p.value)
            w.writerow(row)


def format_value(value: float) -> str:
    """Six significant digits, as the file stores them (so a fresh read compares equal); large
    figures (FLOP/s) written out in full like ours, not as 1.5e+13."""
    text = f"{value:.6g}"
    return f"{float(text):.0f}" if "e+" in text else text


def main(argv: list[str]) -> None:
    """make peers: re-read the peer tools' values into sources/reference/peer_values.csv, then print
    how our ranges hold them (the comparison is the methodology's, read back from that file)."""
    write(collect(Path(argv[0]) if argv else SHARED_DATA))
    print(format_peer_table(peer_comparison()))
    print(f"wrote {PEER_FILE}")


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
