"""Input readers. Importing this package registers every reader (order = detection order)."""
from sources import (  # noqa: F401  (register on import)
    aws_cur,
    azure_cost,
    codecarbon,
    dcgm_dmon,
    dcgm_prom,
    disclosure_format,
    focus,
    gcp_billing,
    invoices,
    oci_cost,
    prom_export,
)
from sources.base import REGISTRY  # noqa: F401
