"""What every command shares at the edge: library errors become one `Error:` line and exit 1.

Its own module so that command modules (cli.py, reconstruct_cli.py) can use it without
importing each other.
"""
from __future__ import annotations

import functools
import sys

import click

from core.errors import InputError


def user_errors(fn):
    """Print InputError as `Error: ...` and exit 1; never a traceback for a user's mistake."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)
    return wrapper
