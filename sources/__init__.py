"""Input readers. Importing this package registers every reader; DETECTION_ORDER decides which
one a file goes to (the first whose sniff matches), not the order of the imports below."""
from sources import (  # noqa: F401  (each reader registers on import)
    aws_cur,
    azure_cost,
    codecarbon,
    dcgm_dmon,
    dcgm_prom,
    dcgmi_stats,
    disclosure_format,
    exchange_rates,
    focus,
    focus_commitments,
    gcp_billing,
    grid_hourly,
    instruments,
    invoices,
    nvidia_smi,
    nvidia_smi_dmon,
    nvidia_smi_exporter,
    oci_cost,
    prom_export,
    provider_carbon,
    slurm_sacct,
    work_log,
)
from sources.base import REGISTRY

# Every reader's kind, in detection order: a file goes to the first whose sniff matches, so a
# narrower format goes before a wider one that would also match it. A new reader goes here too
# (tests/test_reader_order.py fails until it does).
DETECTION_ORDER = (
    "focus", "aws-cur", "aws-cur2", "azure-cost", "gcp-billing", "oci-cost", "invoices", "focus_invoices",
    "exchange_rates", "ecb_eurofxref", "frb_h10",
    "dcgm-prom", "prom-range", "prom-csv", "dcgm-dmon", "codecarbon", "disclosure", "hf-model-card", "work",
    "grid-hourly", "instruments", "aws-carbon", "gcp-carbon", "focus_commitments",
    "nvidia-smi", "nvidia-smi-dmon", "nvidia-smi-exporter", "slurm", "dcgmi-stats",
)


def _in_detection_order() -> None:
    """REGISTRY re-keyed in DETECTION_ORDER; a reader the order leaves out goes last (and the
    test names it), so the import order never decides detection."""
    registered = dict(REGISTRY)
    REGISTRY.clear()
    REGISTRY.update({k: registered.pop(k) for k in DETECTION_ORDER if k in registered})
    REGISTRY.update(registered)


_in_detection_order()
