"""The one exception type users see.

Anything raised as `InputError` reaches the CLI edge and is printed as a single line,
`Error: <file>: <what> (<where>). <fix>`, with exit code 1 and no traceback; so is a failure of
the machine (a full disk, a read-only folder), through environment_error.
"""
from __future__ import annotations

import errno
import os
import re


class InputError(Exception):
    """A problem the user can fix: a file, what is wrong, where, and what to do next."""

    def __init__(self, file: str | os.PathLike[str], what: str, where: str, fix: str) -> None:
        self.file, self.what, self.where, self.fix = str(file), what, where, fix
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" ({self.where})" if self.where else ""
        return f"{self.file}: {self.what}{where}. {self.fix}"


# What a file system refuses, in words, and what the user can do about it (errno name: what, fix).
ENVIRONMENT_ERRORS = {
    "ENOSPC": ("no space left on the device", "Free space on that file system, or write elsewhere, then run the command again"),
    "EDQUOT": ("disk quota exceeded", "Free space within your quota, or write elsewhere, then run the command again"),
    "EFBIG": ("file larger than this system allows", "Raise the file size limit (ulimit -f), or write elsewhere"),
    "EROFS": ("read-only file system", "Write to a folder on a writable file system (--out, --warehouse)"),
    "EACCES": ("permission denied", "Write to a folder you may write to, or change its permissions"),
    "EPERM": ("operation not permitted", "Write to a folder you may write to, or change its permissions"),
    "ENOTDIR": ("a part of this path is a file, not a folder", "Choose a path whose parent folders are folders"),
    "EEXIST": ("a file is where a folder is needed", "Choose another path, or move that file away"),
}
# DuckDB reports what the file system said as text inside its own exception types
DUCKDB_FILE = re.compile(r'(?:file|database|directory) "([^"]+)"', re.IGNORECASE)


def environment_error(exc: BaseException) -> InputError | None:
    """A failure of the machine rather than of meterbook (a full disk, a read-only or forbidden
    folder), from an OSError or a DuckDB error quoting one, as an InputError; None for others."""
    if isinstance(exc, OSError):
        return _os_error(exc)
    if type(exc).__module__.lstrip("_").startswith("duckdb"):
        return _duckdb_error(str(exc))
    return None


def _os_error(exc: OSError) -> InputError | None:
    name = errno.errorcode.get(exc.errno or 0)
    if name not in ENVIRONMENT_ERRORS:
        return None
    what, fix = ENVIRONMENT_ERRORS[name]
    return InputError(exc.filename or "output", what, name, fix)


def _duckdb_error(text: str) -> InputError | None:
    name = next((n for n in ENVIRONMENT_ERRORS if os.strerror(getattr(errno, n)).lower() in text.lower()), None)
    if name is None:
        return None
    what, fix = ENVIRONMENT_ERRORS[name]
    path = DUCKDB_FILE.search(text)
    # DuckDB's own words say which step failed (a commit, a checkpoint): on the line, shortened
    step = ":".join(text.splitlines()[0].split(":")[:2]).strip()
    # the write-ahead log is part of the warehouse the user named
    return InputError(path.group(1).removesuffix(".wal") if path else "warehouse", what, f"{name}, DuckDB: {step}",
                      fix + "; the warehouse keeps what was committed before")
