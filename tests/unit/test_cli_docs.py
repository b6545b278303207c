"""docs/cli.md is the commands' own help, current; CLI choices are the library's."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import click

from esqlog.cli.docs import render
from esqlog.cli.eval_cmd import eval_command
from esqlog.cli.search_cmd import search_command
from esqlog.scoring.rewrite import RewriteMode
from esqlog.wrapper import QUERY_MODES, SEARCH_MODES

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_cli_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/cli.md is out of date: run python -m esqlog.cli.docs > docs/cli.md"
    )


def test_every_command_has_a_section() -> None:
    text = render()
    for name in (
        "calibrate",
        "search",
        "explain",
        "eval",
        "compare",
        "bench-beir",
        "demo",
        "similarity apply",
        "similarity revert",
        "index",
        "mcp",
    ):
        assert f"\n## esqlog {name}\n" in text
        assert f"Usage: esqlog {name} [OPTIONS]" in text


def _choices(command: click.Command, name: str) -> tuple[str, ...]:
    (param,) = [p for p in command.params if p.name == name]
    assert isinstance(param.type, click.Choice)
    return tuple(param.type.choices)


def test_mode_choices_come_from_the_library() -> None:
    # the wrapper's modes, then the CLI-only identifiers mode (not a wrap() mode yet)
    assert _choices(search_command, "mode") == QUERY_MODES
    assert set(QUERY_MODES) == set(SEARCH_MODES) - {"native"}
    assert _choices(eval_command, "mode") == get_args(RewriteMode)
