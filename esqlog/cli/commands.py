"""The subcommands, loaded lazily: each lives in its own module of this package.

Why lazily: the command modules import numpy and the client libraries (0.4-0.9 s), and
``esqlog --help`` or a typo should not pay for that. So the group knows each command by its
module and its one-line summary (what ``--help`` lists) and imports a module only when that
command runs or shows its own help. tests/unit/test_cli_lazy.py checks every summary is
the command's own first sentence, so the listing cannot drift from the commands.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

import click


class LazyCommand(NamedTuple):
    module: str  # in esqlog.cli
    attribute: str
    summary: str  # click's short help of the command, before truncation to the screen


LAZY_COMMANDS: dict[str, LazyCommand] = {
    "calibrate": LazyCommand(
        "calibrate_cmd",
        "calibrate_command",
        "Measure a field's hapax density and predict its q, reading only.",
    ),
    "search": LazyCommand(
        "search_cmd",
        "search_command",
        "Search INDEX for QUERY with q-log IDF (a match query on the calibrated field).",
    ),
    "explain": LazyCommand(
        "explain_cmd",
        "explain_command",
        "Show, per analyzed term of QUERY, n, N, idf, idf_q and the weight idf_q / idf.",
    ),
    "similarity": LazyCommand(
        "similarity_cmd",
        "similarity_group",
        "Make q-log BM25 the index's default similarity (closes the index briefly), or undo it.",
    ),
    "eval": LazyCommand(
        "eval_cmd",
        "eval_command",
        "Measure native BM25 vs q-log on queries with judgments (ir-measures metrics).",
    ),
    "compare": LazyCommand(
        "compare_cmd",
        "compare_command",
        "What esqlog would change on your own queries, without any judgments.",
    ),
    "bench-beir": LazyCommand(
        "bench_cmd",
        "bench_command",
        "Benchmark native BM25 against every esqlog mode on a BEIR folder.",
    ),
    "demo": LazyCommand(
        "demo_cmd",
        "demo_command",
        "Index 5,000 real Go functions into a scratch index, calibrate, compare with BM25.",
    ),
    "mcp": LazyCommand(
        "mcp_cmd",
        "mcp_command",
        "Serve search_code and read_code on INDEX to an MCP client (a coding agent).",
    ),
    "plugin": LazyCommand(
        "plugin_cmd",
        "plugin_group",
        "Build the esqlog-terms engine plugin zip; list and prune the word lists it reads; show "
        "its caches on every node.",
    ),
    "index": LazyCommand(
        "index_cmd",
        "index_command",
        "Index the source files under PATH into INDEX, for esqlog search and esqlog mcp.",
    ),
}


def load(name: str) -> click.Command | None:
    """The command named ``name`` (its module imported now), or None for an unknown name."""
    entry = LAZY_COMMANDS.get(name)
    if entry is None:
        return None
    module = importlib.import_module(f"esqlog.cli.{entry.module}")
    command: click.Command = getattr(module, entry.attribute)
    return command


def listed(name: str) -> click.Command:
    """A stand-in for the ``--help`` listing: the summary, nothing imported."""
    return click.Command(name, help=LAZY_COMMANDS[name].summary)
