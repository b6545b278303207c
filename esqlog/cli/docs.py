"""The CLI reference (docs/cli.md), generated from the click commands themselves.

``python -m esqlog.cli.docs > docs/cli.md`` rewrites it; tests/unit/test_cli_docs.py fails when
the file and the commands disagree, so the reference cannot drift from ``--help``.
"""

from __future__ import annotations

import click

from esqlog.cli import main

WIDTH = 100
HEADER = """# esqlog command reference

Generated from the commands' own `--help` by `python -m esqlog.cli.docs > docs/cli.md`;
do not edit by hand (tests/unit/test_cli_docs.py checks it is current).
"""


def _sections(command: click.Command, ctx: click.Context) -> list[tuple[str, str]]:
    """(command path, help text) of the command and, for groups, every visible subcommand,
    depth first in listed order; each help is rendered in its parent's context, as click
    does for ``--help``."""
    found = [(ctx.command_path, command.get_help(ctx))]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += _sections(sub, click.Context(sub, info_name=name, parent=ctx))
    return found


def render() -> str:
    """The whole reference as Markdown: one section per command with its help text."""
    root = click.Context(
        main,
        info_name="esqlog",
        max_content_width=WIDTH,
        terminal_width=WIDTH,
        **main.context_settings,
    )
    parts = [HEADER]
    for path, text in _sections(main, root):
        parts.append(f"\n## {path}\n\n```text\n{text}\n```\n")
    return "".join(parts)


if __name__ == "__main__":  # pragma: no cover
    print(render(), end="")
