"""The list of subcommands; each lives in its own module of this package."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
