"""A reporting month, 'YYYY-MM' in UTC: how a command checks the one it is given and where it
starts and ends. Every report and the demo read a month through here, so they refuse the same
strings with the same line."""
from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta

from core.errors import InputError

MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


def check_month(month: str) -> str:
    """The month itself, or InputError when it is not 'YYYY-MM'."""
    if not MONTH.fullmatch(month or ""):
        raise InputError(f"--month {month}", "not a month", "expected YYYY-MM", "Pass e.g. --month 2026-10")
    return month


def month_bounds(month: str) -> tuple[datetime, datetime]:
    """(first instant, first instant of the next month), naive UTC."""
    start = datetime.strptime(check_month(month), "%Y-%m")
    return start, start + timedelta(days=calendar.monthrange(start.year, start.month)[1])
