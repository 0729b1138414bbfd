"""The one exception type users see.

Anything raised as `InputError` reaches the CLI edge and is printed as a single line,
`Error: <file>: <what> (<where>). <fix>`, with exit code 1 and no traceback.
"""
from __future__ import annotations

import os


class InputError(Exception):
    """A problem the user can fix: a file, what is wrong, where, and what to do next."""

    def __init__(self, file: str | os.PathLike[str], what: str, where: str, fix: str) -> None:
        self.file, self.what, self.where, self.fix = str(file), what, where, fix
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" ({self.where})" if self.where else ""
        return f"{self.file}: {self.what}{where}. {self.fix}"
