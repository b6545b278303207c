"""The list of subcommands; each lives in its own module of this package."""

from __future__ import annotations

import click

from esqlog.cli.bench_cmd import bench_command
from esqlog.cli.calibrate_cmd import calibrate_command
from esqlog.cli.compare_cmd import compare_command
from esqlog.cli.demo_cmd import demo_command
from esqlog.cli.eval_cmd import eval_command
from esqlog.cli.explain_cmd import explain_command
from esqlog.cli.index_cmd import index_command
from esqlog.cli.mcp_cmd import mcp_command
from esqlog.cli.search_cmd import search_command
from esqlog.cli.similarity_cmd import similarity_group

COMMANDS: list[click.Command] = [calibrate_command, search_command, explain_command,
                                 similarity_group, eval_command, compare_command,
                                 bench_command, demo_command, mcp_command, index_command]
