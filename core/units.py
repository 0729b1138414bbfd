"""Unit conversions, named once. Definitions, not coefficients: they have no range or source."""
from __future__ import annotations

MJ_PER_KWH = 3.6e9          # millijoules in a kilowatt-hour (DCGM energy counters are in mJ)
WH_PER_KWH = 1000.0
W_PER_KW = 1000.0
S_PER_H = 3600.0
US_PER_S = 1.0e6            # microseconds in a second (Spark times are microseconds)
G_PER_KG = 1000.0
KG_PER_T = 1000.0
KWH_PER_MWH = 1000.0
# DCGM writes "no value" as huge numbers: DCGM_FP64_BLANK = 2**47 and the int64 blanks from
# 0x7ffffffffffffff0 up (dcgm_structs.h). No real reading comes near 2**47.
DCGM_BLANK_MIN = 2.0 ** 47
# int32 fields (utilization, clocks, temperatures) write their blanks as 0x7ffffff0..0x7fffffff.
# An energy counter passing through that 16-value window would lose one sample, not energy.
DCGM_INT32_BLANK_MIN = 0x7FFFFFF0
DCGM_INT32_BLANK_MAX = 0x7FFFFFFF


def mj_to_kwh(mj: float) -> float:
    return mj / MJ_PER_KWH


# Appended for the reconstruction engine (pipelines/reconstruct/__init__.py).
H_PER_DAY = 24.0
H_PER_YEAR = 8766.0         # Julian year (365.25 d x 24 h), the usual amortisation year
J_PER_KWH = 3.6e6
TOKENS_PER_MILLION = 1.0e6
PERCENT = 100.0             # percentiles and percentages
# Money is allocated exactly to the cent: a difference of half a cent either way is a mismatch.
HALF_CENT = 0.005
# Appended for the peer cross-check (tools/peers.py): eGRID and CodeCarbon write lb/MWh.
G_PER_LB = 453.59237        # avoirdupois pound, exact by definition
# Appended for the chargeback's findings (findings_ranked.sql): a break-even in months against a
# hardware life in years.
MONTHS_PER_YEAR = 12.0
# Appended for the jobs' unit economics (job_month): per thousand requests or samples.
UNITS_PER_THOUSAND = 1.0e3
