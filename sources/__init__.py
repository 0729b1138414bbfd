"""Input readers. Importing this package registers every reader (order = detection order)."""
from sources.base import REGISTRY  # noqa: F401
from sources import focus, aws_cur, azure_cost, gcp_billing, oci_cost, invoices, dcgm_prom, prom_export, dcgm_dmon, codecarbon, disclosure_format, work_log  # noqa: F401  (register on import)
from sources import grid_hourly, instruments  # noqa: F401  (register on import)
