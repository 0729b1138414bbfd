"""Input readers. Importing this package registers every reader (order = detection order)."""
# isort: off
# The import order below is the detection order (a file goes to the first reader whose sniff
# matches), so it is kept as written: an import sort would reorder detection without a word.
from sources.base import REGISTRY  # noqa: F401
from sources import focus, aws_cur, azure_cost, gcp_billing, oci_cost, invoices  # noqa: F401  (register on import)
from sources import exchange_rates  # noqa: F401
from sources import dcgm_prom, prom_export, dcgm_dmon, codecarbon, disclosure_format, work_log  # noqa: F401
from sources import grid_hourly, instruments, provider_carbon, focus_commitments  # noqa: F401
from sources import nvidia_smi, nvidia_smi_dmon, nvidia_smi_exporter, slurm_sacct, dcgmi_stats  # noqa: F401
# isort: on
