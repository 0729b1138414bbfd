"""What every command shares at the edge: library errors become one `Error:` line and exit 1.

Its own module so that command modules (cli.py, reconstruct/cli.py) can use it without
importing each other.
"""
from __future__ import annotations

import functools
import importlib
import sys

import click

from core.errors import InputError, environment_error
from core.text import printable


def user_errors(fn):
    """Print InputError, and a full disk or a folder that cannot be written, as `Error: ...` and exit 1;
    never a traceback for what the user can fix."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            click.echo(f"Error: {printable(str(exc))}", err=True)
            sys.exit(1)
        except Exception as exc:
            if (known := environment_error(exc)) is None:
                raise
            click.echo(f"Error: {printable(str(known))}", err=True)
            sys.exit(1)
    return wrapper


class LazyGroup(click.Group):
    """A command group whose `lazy` subcommands ({name: "module.attribute"}) are imported when
    first asked for: `meterbook reconstruct` pulls in SciPy (half a second of imports), which
    `meterbook ingest` and `report` never need, and every command paid for it at start-up."""

    def __init__(self, *args, lazy: dict[str, str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, attribute = self.lazy[cmd_name].rsplit(".", 1)
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)
