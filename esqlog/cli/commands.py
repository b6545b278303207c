"""The list of subcommands; each lives in its own module of this package."""

from __future__ import annotations

import click

from esqlog.cli.calibrate_cmd import calibrate_command

COMMANDS: list[click.Command] = [calibrate_command]
